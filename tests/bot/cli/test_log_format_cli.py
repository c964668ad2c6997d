"""``--log-format text|json`` (``$DELIBERATE_LOG_FORMAT``): a process writes one format on
stderr. A server (``web`` here) logs JSON by default, and then its words for people are JSON
lines too; asked for text, nothing on its stderr is JSON. A command a person runs says its
own lines, errors included, in the format asked; an unknown format is refused before
anything is done."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.main import REVEALING
from tests.bot.cli.process import run
from tests.bot.cli.test_interrupt_cli import Live


def _object(line: str) -> dict[str, Any] | None:
    try:
        found = json.loads(line)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


@pytest.mark.parametrize(
    ("asked", "env", "as_json"),
    [
        ((), {}, True),  # a server's default
        (("--log-format", "text"), {}, False),
        ((), {"DELIBERATE_LOG_FORMAT": "text"}, False),
        (("--log-format", "JSON", "--log-level", "debug"), {"DELIBERATE_LOG_FORMAT": "text"}, True),
    ],
)
def test_the_web_writes_one_format_on_stderr(
    workspace: str, asked: tuple[str, ...], env: dict[str, str], as_json: bool
) -> None:
    live = Live("--workspace", workspace, *asked, "web", "--port", "0", env=env)
    try:
        live.wait_for("stderr", lambda line: "the web inspector is at http://127.0.0.1:" in line)
        live.ctrl_c()
        assert live.finish() == 0
    finally:
        live.kill()
    lines = live.lines["stderr"]
    # the log line saying where it listens, and the line that tells people
    assert any("web: listening on http://127.0.0.1:" in line for line in lines), lines
    parsed = [_object(line) for line in lines]
    assert all(parsed) if as_json else not any(parsed), lines


def test_a_commands_own_lines_are_in_the_format_asked(
    capsys: pytest.CaptureFixture[str], workspace: str
) -> None:
    argv = ("--log-level", "info", "state", "set", "decision.a", "x", "--actor", "user:al")
    code, out, err = run(capsys, workspace, "--log-format", "json", *argv, "--reveal")
    lines = [json.loads(line) for line in err.splitlines()]
    assert code == 0 and out.startswith('committed: decision.a = "x"')
    assert [(x["logger"], x["level"]) for x in lines] == [
        ("deliberate", "warning"),
        ("deliberate.gateway", "info"),
    ]
    assert lines[0]["msg"] == REVEALING and lines[1]["event"] == "gateway.decision"
    code, out, err = run(capsys, workspace, "--log-format", "text", *argv, "--reveal")
    said, logged = err.splitlines()
    assert code == 0 and said == REVEALING and logged.startswith("info: ")
    # a level alone still asks for JSON lines: now the command's own words with them
    code, _, err = run(capsys, workspace, *argv, "--reveal")
    assert code == 0 and [_object(line) is not None for line in err.splitlines()] == [True] * 2


def test_an_error_is_a_json_line_of_level_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    monkeypatch.setenv("PORT", "eighty")
    code, out, err = run(capsys, workspace, "--log-format", "json", "web")
    [line] = [json.loads(line) for line in err.splitlines()]
    assert (code, out) == (2, "")
    assert (line["level"], line["logger"]) == ("error", "deliberate")
    assert line["msg"] == "deliberate: PORT: 'eighty' is not a port number (0-65535)"


@pytest.mark.parametrize(
    ("asked", "env"),
    [(("--log-format", "yaml"), {}), ((), {"DELIBERATE_LOG_FORMAT": "yaml"})],
)
def test_an_unknown_format_is_refused_and_nothing_is_done(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    workspace: str,
    asked: tuple[str, ...],
    env: dict[str, str],
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    argv = ("state", "set", "decision.a", "x", "--actor", "user:al")
    code, out, err = run(capsys, workspace, *asked, *argv)
    assert (code, out) == (2, "")
    assert err == (
        "deliberate: log format 'yaml' (--log-format or DELIBERATE_LOG_FORMAT) is not one of "
        "text, json\n"
    )
    monkeypatch.delenv("DELIBERATE_LOG_FORMAT", raising=False)
    assert run(capsys, workspace, "state", "get", "decision.a")[0] == 1  # never written


def test_a_server_started_at_a_terminal_speaks_plain_lines(tmp_path: Path) -> None:
    """A person trying ``run discord`` at a terminal reads a sentence, not a JSON object;
    the same command under a service manager (stderr not a terminal) writes JSON."""
    env = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
    env |= {"DELIBERATE_HOME": str(tmp_path)}
    env.pop("DELIBERATE_LOG_FORMAT", None)
    argv = [str(Path(sys.executable).with_name("deliberate")), "run", "discord"]
    leader, follower = pty.openpty()
    try:
        ran = subprocess.run(argv, stderr=follower, stdout=subprocess.DEVNULL, env=env, timeout=60)
        os.close(follower)
        said = b""
        with contextlib.suppress(OSError):  # (EIO once the writer is gone)
            while chunk := os.read(leader, 4096):
                said += chunk
    finally:
        os.close(leader)
    assert ran.returncode == 2
    assert said.decode().strip() == (
        "deliberate: DISCORD_TOKEN is not set: the bot token from the Developer Portal (Bot page)"
    )
    piped = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert json.loads(piped.stderr)["msg"] == said.decode().strip()
