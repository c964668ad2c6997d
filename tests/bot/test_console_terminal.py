"""The console's terminal front end driven through prompt_toolkit's pipe input (line editing,
history, Ctrl-C and Ctrl-D), its colours and when they are off, a bare number as a click,
``/help`` against the commands the console handles, and Ctrl-C while a turn is handled."""

from __future__ import annotations

import io
import json
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from bot.app import App
from bot.console import COLOURS, HELP, PLAIN, Console, render_view
from bot.console.terminal import (
    HISTORY_BYTES,
    HISTORY_FILE,
    LEAVE_HINT,
    Terminal,
    colour_wanted,
    open_history,
)
from core.deliberation.beats import ActionStyle
from core.deliberation.memory import Candidate
from core.deliberation.view import Button, View, ViewKind
from core.runtime.runner import Runtime
from tests.bot.test_console import console as piped
from tests.factories import actor

ROOT = Path(__file__).resolve().parents[2]
UP, CTRL_C, CTRL_D = "\x1b[A", "\x03", "\x04"


@pytest.fixture
def keys() -> Iterator[PipeInput]:
    with create_pipe_input() as pipe:
        yield pipe


def terminal(keys: PipeInput, said: list[str], history: Any = None) -> Terminal:
    history = history if history is not None else InMemoryHistory()
    return Terminal(history, said.append, colour=False, input=keys, output=DummyOutput())


def read(term: Terminal, keys: PipeInput, typed: str) -> str | None:
    keys.send_text(typed)
    return term.read()


def test_up_recalls_an_earlier_line_and_the_line_can_be_edited(keys: PipeInput) -> None:
    term = terminal(keys, [])
    assert read(term, keys, "make it managd\r") == "make it managd"
    assert read(term, keys, UP + "\x7fed\r") == "make it managed"  # Backspace edits it
    assert read(term, keys, UP + UP + "\r") == "make it managd"


def test_ctrl_c_clears_the_line_and_a_second_one_leaves(keys: PipeInput) -> None:
    said: list[str] = []
    term = terminal(keys, said)
    assert read(term, keys, "half a thought" + CTRL_C) == ""  # dropped, nothing sent
    assert read(term, keys, CTRL_C) is None
    assert said == []


def test_ctrl_c_on_an_empty_line_says_how_to_leave(keys: PipeInput) -> None:
    said: list[str] = []
    term = terminal(keys, said)
    assert read(term, keys, CTRL_C) == ""
    assert said == [LEAVE_HINT]
    assert read(term, keys, "go on\r") == "go on"  # a line in between: not a second Ctrl-C
    assert read(term, keys, CTRL_C) == ""
    assert read(term, keys, CTRL_C) is None
    assert said == [LEAVE_HINT, LEAVE_HINT]


def test_ctrl_d_leaves_on_an_empty_line(keys: PipeInput) -> None:
    term = terminal(keys, [])
    assert read(term, keys, CTRL_D) is None


def test_history_is_kept_in_the_data_directory(keys: PipeInput, tmp_path: Path) -> None:
    history = open_history(tmp_path / "home")
    assert isinstance(history, FileHistory)
    assert read(terminal(keys, [], history), keys, "postgres?\r") == "postgres?"
    assert "+postgres?" in (tmp_path / "home" / HISTORY_FILE).read_text(encoding="utf-8")
    later = terminal(keys, [], open_history(tmp_path / "home"))  # the next console run
    assert read(later, keys, UP + "\r") == "postgres?"


def test_history_stays_in_memory_when_the_directory_cannot_be_written(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    assert isinstance(open_history(tmp_path / "a-file"), InMemoryHistory)


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colours_only_on_a_terminal_without_no_color() -> None:
    assert colour_wanted(Tty(), {"TERM": "xterm-256color"})
    assert colour_wanted(Tty(), {"NO_COLOR": ""})  # present but empty does not count
    assert not colour_wanted(Tty(), {"NO_COLOR": "1"})
    assert not colour_wanted(Tty(), {"TERM": "dumb"})
    assert not colour_wanted(io.StringIO(), {})


def view(**fields: Any) -> View:
    button = {"beat": "B", "target_id": "c1", "target_version": 1}
    buttons = [
        Button(action="ConfirmCurrent", label="Use this", style=ActionStyle.PRIMARY, **button),
        Button(action="Expand", label="Expand", style=ActionStyle.DEFAULT, **button),
        Button(action="Discard", label="Drop it", style=ActionStyle.DANGER, **button),
    ]
    return View(
        session_id="s1",
        correlation_id="c",
        kind=ViewKind.REPLY,
        text="Candidate: postgres",
        buttons=buttons,
        fired=["CandidateReady"],
        candidate=Candidate(id="c1", text="postgres"),
        **fields,
    )


def test_buttons_and_the_candidate_are_coloured_and_plain_stays_plain() -> None:
    assert (
        render_view(view(), PLAIN)
        == render_view(view())
        == (
            "assistant: Candidate: postgres\n"
            "  mode: idle; beats: CandidateReady\n"
            "  [1] Use this  [2] Expand  [3] Drop it"
        )
    )
    assert render_view(view(), COLOURS).splitlines() == [
        "assistant: Candidate: \x1b[1;33mpostgres\x1b[0m",
        "\x1b[2m  mode: idle; beats: CandidateReady\x1b[0m",
        "  \x1b[1;32m[1] Use this\x1b[0m  \x1b[36m[2] Expand\x1b[0m  \x1b[1;31m[3] Drop it\x1b[0m",
    ]


LINES = ["what if we used postgres with read replicas", "/click 9"]


def test_colours_when_stdout_is_a_terminal_and_not_with_no_color_or_json(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    code, plain, _ = piped(capsys, monkeypatch, workspace, LINES)
    assert code == 0 and "\x1b[" not in plain and "! no button 9 is shown" in plain
    tty = Tty()
    monkeypatch.setattr(sys, "stdout", tty)
    piped(capsys, monkeypatch, workspace, LINES, "--session", "s2")  # the same turn afresh
    coloured = tty.getvalue()
    assert "\x1b[1;32m[1] Use this\x1b[0m" in coloured
    assert "\x1b[31m! no button 9 is shown" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain
    for env, flag in [("1", ()), ("", ("--json",))]:
        monkeypatch.setenv("NO_COLOR", env)
        tty.seek(0)
        tty.truncate()
        piped(capsys, monkeypatch, workspace, LINES, "--session", f"s3{env}", *flag)
        assert tty.getvalue() and "\x1b[" not in tty.getvalue()


def events(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def test_a_bare_number_clicks_that_button(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    lines = ["what if we used postgres with read replicas", "  1 ", "2"]
    code, out, _ = piped(capsys, monkeypatch, workspace, lines, "--json")
    reply, committed, outcome, after = events(out)
    assert reply["event"] == "reply" and reply["buttons"][0]["action"] == "ConfirmCurrent"
    assert committed["event"] == "committed" and outcome["event"] == "outcome"
    # 2 was a button ("Try another angle"), no longer offered once the decision is made
    assert after == {
        "event": "error",
        "message": 'button 2 ("Try another angle") is no longer offered: nothing was done',
    }
    assert code == 0


def test_a_number_no_button_had_is_an_answer(app: App) -> None:
    said: list[str] = []
    console = Console(app.runtime(use_env=False), "s1", actor("user:alice"), said.append)
    console.handle(" 2 ")  # no button was ever shown: "how many replicas?" "2"
    assert said[-1].startswith("assistant: ")
    assert app.runtime(use_env=False).sessions.load("s1").interaction.turn_count == 1
    console.handle("what if we used postgres")
    console.handle("99")  # no button 99: a message too
    assert said[-1].startswith("assistant: ")
    assert app.runtime(use_env=False).sessions.load("s1").interaction.turn_count == 3
    console.handle("2nd thoughts: make it managed")  # a number inside words is chat
    assert said[-1].startswith("assistant: ")


def test_help_lists_every_command_the_console_handles(app: App) -> None:
    console = Console(app.runtime(use_env=False), "s1", actor("user:alice"), print)
    listed = set(re.findall(r"^  (/\w+)(?:, (/\w+))?", HELP, re.M))
    assert {c for pair in listed for c in pair if c} == set(console._commands())
    assert re.search(r"^  N +click button N", HELP, re.M)
    assert "Ctrl-C" in HELP and "Ctrl-D" in HELP and "Up" in HELP


def test_ctrl_c_while_a_turn_is_handled_exits_130_in_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    def interrupted(*_: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(Runtime, "send", interrupted)
    code, out, err = piped(capsys, monkeypatch, workspace, ["what if", "never handled"])
    assert code == 130 and out == ""
    assert err.splitlines()[-1] == "deliberate: interrupted"
    assert "Traceback" not in err and len(err.splitlines()) == 2  # the session line, this


def test_prompt_toolkit_is_a_declared_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    [spec] = [d for d in project["dependencies"] if d.startswith("prompt_toolkit")]
    assert ">=3.0" in spec and "<4" in spec


def test_ci_installs_tmux_before_the_tests_run() -> None:
    # the README's install command (scripts/setup) installs it; CI runs that, then the tests
    setup = (ROOT / "scripts" / "setup").read_text(encoding="utf-8")
    assert "command -v tmux >/dev/null || missing+=(tmux)" in setup
    assert "apt-get install -y" in setup
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert script.index("\nscripts/setup\n") < script.index("\n.venv/bin/pytest")


def test_the_history_file_is_private_and_bounded(tmp_path: Path) -> None:
    open_history(tmp_path)
    path = tmp_path / HISTORY_FILE
    assert path.stat().st_mode & 0o777 == 0o600
    entry = "\n# 2026-11-23 10:00:00.000000\n+" + "x" * 100 + "\n"
    path.write_text(entry * (2 * HISTORY_BYTES // len(entry)), encoding="utf-8")
    history = open_history(tmp_path)
    assert path.stat().st_size <= HISTORY_BYTES
    kept = list(history.load_history_strings())
    assert kept and all(line == "x" * 100 for line in kept)  # whole entries, none cut
