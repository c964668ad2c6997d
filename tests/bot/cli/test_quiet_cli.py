"""Quiet by default: a command answers on stdout, says warnings and errors on stderr in one
plain line each, and writes JSON log lines only when asked (``--log-level``,
``--log-file``); ``worker --burst`` says where it runs and what it did, not RQ's lines."""

from __future__ import annotations

import functools
import json
import socket
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest
from redis import Redis

from core.state.keys import WorkspaceKeys
from tests.bot.cli.process import Ran, command
from tests.conftest import write_config
from tests.rules.rig import config_text

Cli = Callable[..., Ran]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Cli:
    """The command run in this process: these tests are about what it prints, not about
    the process (which ``test_startup.py`` and ``test_interrupt_cli.py`` start for real)."""
    return functools.partial(command, capsys)


def test_a_command_prints_its_answer_and_no_log_line(cli: Cli, workspace: str) -> None:
    done = cli("--workspace", workspace, "state", "set", "decision.a", "x", "--actor", "user:al")
    assert done.returncode == 0 and done.stdout.startswith('committed: decision.a = "x"')
    assert done.stderr == ""
    refused = cli(
        "--workspace", workspace, "state", "set", "stream.state", "off", "--actor", "user:b"
    )
    assert refused.returncode == 1 and refused.stdout.startswith("rejected (protected)")
    assert refused.stderr == ""


def test_log_level_shows_the_json_decision_lines_on_stderr(cli: Cli, workspace: str) -> None:
    argv = ("--workspace", workspace, "state", "set", "decision.a", "x", "--actor", "user:al")
    for asked, env in ((["--log-level", "info"], {}), ([], {"DELIBERATE_LOG_LEVEL": "INFO"})):
        done = cli(*asked, *argv, env=env)
        [line] = [json.loads(x) for x in done.stderr.splitlines()]
        assert (line["event"], line["outcome"], line["level"]) == (
            "gateway.decision",
            "committed",
            "info",
        )
        assert done.stdout.startswith("committed: decision.a")


def test_log_file_gets_the_json_lines_and_stderr_stays_quiet(
    cli: Cli, workspace: str, tmp_path: Path
) -> None:
    path = tmp_path / "deliberate.jsonl"
    done = cli(
        "--workspace", workspace, "--log-file", str(path), "state", "set", "decision.a", "x",
        "--actor", "user:al",
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == ""
    again = cli(
        "--workspace", workspace, "state", "set", "decision.a", "y", "--actor", "user:al",
        env={"DELIBERATE_LOG_FILE": str(path)},
    )  # fmt: skip
    assert again.returncode == 0 and again.stderr == ""
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert [(x["event"], x["version"]) for x in lines] == [
        ("gateway.decision", 1),
        ("gateway.decision", 2),
    ]
    nowhere = cli("--log-file", str(tmp_path / "no" / "such.jsonl"), "state", "list")
    assert nowhere.returncode == 2 and "Traceback" not in nowhere.stderr
    assert nowhere.stderr.startswith(f"deliberate: cannot write the log file {tmp_path}/no/")


def test_a_warning_is_one_plain_line(cli: Cli, workspace: str, redis_client: Redis) -> None:
    done = cli("--workspace", workspace, "state", "set", "decision.a", "x", "--actor", "user:a")
    assert done.returncode == 0
    planted = cast(str, redis_client.xadd(WorkspaceKeys(workspace).log, {"junk": "1"}))
    done = cli("--workspace", workspace, "log")
    assert done.returncode == 0 and "decision.a" in done.stdout
    # the store's warning, in one plain line (beside the command's own word on the record)
    said = [x for x in done.stderr.splitlines() if not x.startswith("deliberate log: ")]
    assert said == [f"warning: log record {planted} cannot be read: no ts field; skipped"]
    loud = cli("--workspace", workspace, "--log-level", "warning", "log")
    logged = [json.loads(x) for x in loud.stderr.splitlines()]  # the command's word too
    assert [(x["level"], x["logger"]) for x in logged if x["logger"] != "deliberate"] == [
        ("warning", "deliberate.store")
    ]


def _rules(tmp_path: Path) -> str:
    rules = """
  - id: note
    when: {key: "decision.*", op: set}
    then:
      - mutate: {op: set, key: "test.last", value: "{{ mutation.key }}"}
"""
    return str(write_config(tmp_path, config_text(rules)))


def test_burst_worker_prints_a_progress_line_and_a_summary_only(
    cli: Cli, workspace: str, tmp_path: Path
) -> None:
    config = _rules(tmp_path)
    base = ("--workspace", workspace, "--config", config)
    assert cli(*base, "worker", "--burst").returncode == 0  # the consumer group
    assert cli(*base, "state", "set", "decision.a", "x", "--actor", "user:al").returncode == 0
    done = cli(*base, "worker", "--burst")
    assert done.returncode == 0 and done.stdout == ""
    progress, summary = done.stderr.splitlines()  # and nothing of RQ's
    assert progress == (
        f"deliberate worker --burst: rules on {workspace}; running until nothing is left"
    )
    assert summary.startswith(
        "deliberate worker --burst: 2 mutations handled, 1 runs started in 1 workspace(s), "
    )
    assert cli(*base, "state", "get", "test.last").stdout.startswith('test.last = "decision.a"')
    assert cli(*base, "state", "set", "decision.b", "x", "--actor", "user:al").returncode == 0
    loud = cli(*base, "--log-level", "info", "worker", "--burst")
    logged = [json.loads(x) for x in loud.stderr.splitlines() if x.startswith("{")]
    assert any(x["logger"] == "rq.worker" for x in logged)  # RQ's lines, asked for
    assert any(x["logger"] == "deliberate.rules" for x in logged)


def test_burst_worker_says_a_connectors_failure_in_one_line(
    cli: Cli, workspace: str, tmp_path: Path
) -> None:
    """OBS out of reach: the connector's words once a try, not obs-websocket's traceback
    nor RQ's job dump with ours."""
    with socket.socket() as taken:  # a port nobody listens on
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
    rules = """
  - id: scene
    when: {key: "decision.*", op: set}
    then:
      - action: obs.setScene
        args: {name: "{{ mutation.value }}"}
"""
    config = str(write_config(tmp_path, config_text(rules)))
    base = ("--workspace", workspace, "--config", config)
    env = {"OBS_WEBSOCKET_URL": f"ws://127.0.0.1:{port}"}
    assert cli(*base, "worker", "--burst").returncode == 0  # the consumer group
    assert cli(*base, "state", "set", "decision.a", "x", "--actor", "user:al").returncode == 0
    done = cli(*base, "worker", "--burst", env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    progress, *tries, summary = done.stderr.splitlines()
    assert progress.endswith("running until nothing is left")
    assert summary.startswith("deliberate worker --burst: 1 mutations handled, 1 runs started")
    assert tries and all(
        line.startswith("warning: job rule-")
        and line.endswith(
            ": OBS: cannot connect (ConnectionRefusedError: [Errno 111] Connection refused)"
        )
        for line in tries
    ), tries


def test_burst_worker_shows_the_lines_a_rule_writes(
    cli: Cli, workspace: str, tmp_path: Path
) -> None:
    """``log.write`` is a rule's output for whoever runs the worker: ``--burst`` shows its
    lines at the default level (from info; a debug one stays out), cleaned of what would
    steer the terminal; a level asked for decides instead."""
    rules = """
  - id: say
    when: {key: "decision.*", op: set}
    then:
      - action: log.write
        args: {message: "we chose {{ mutation.value }}"}
      - action: log.write
        args: {message: "a detail", level: debug}
"""
    config = str(write_config(tmp_path, config_text(rules)))
    base = ("--workspace", workspace, "--config", config)
    assert cli(*base, "worker", "--burst").returncode == 0  # the consumer group
    value = "\x1b]0;a title\x07postgres\x1b[2J"
    assert cli(*base, "state", "set", "decision.a", value, "--actor", "user:al").returncode == 0
    done = cli(*base, "worker", "--burst")
    assert done.returncode == 0 and done.stdout == ""
    progress, said, summary = done.stderr.splitlines()
    assert progress.endswith("running until nothing is left") and summary.startswith(
        "deliberate worker --burst: 1 mutations handled, 1 runs started"
    )
    assert said == "info: we chose postgres"
    assert cli(*base, "state", "set", "decision.b", "mysql", "--actor", "user:al").returncode == 0
    quiet = cli(*base, "--log-level", "warning", "--log-format", "text", "worker", "--burst")
    assert quiet.returncode == 0 and "we chose" not in quiet.stderr
    assert len(quiet.stderr.splitlines()) == 2  # where it runs, and the summary
