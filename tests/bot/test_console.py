"""``deliberate console`` with stdin not a terminal (one message per line, /click and /do),
``--json`` events, and ``deliberate trace`` of what a console session did; plus the same
console run as a real process, as an operator would start it."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from typing import Any

import pytest

from bot.app import App
from bot.console import Console
from bot.main import main
from core.deliberation.beats import ActionStyle
from core.deliberation.view import Button
from tests.factories import actor


def console(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    workspace: str,
    lines: list[str],
    *extra: str,
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    code = main(["--workspace", workspace, "console", "--session", "s1", *extra])
    out, err = capsys.readouterr()
    return code, out, err


def events(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def test_json_events_from_chat_to_commit(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    lines = ["what if we used postgres with read replicas", "/click 1", "/click 9", "/state"]
    code, out, err = console(capsys, monkeypatch, workspace, lines, "--json")
    assert code == 0 and "session s1" in err
    reply, committed, outcome, error, state = events(out)
    assert reply["event"] == "reply" and reply["fired"] == ["CandidateReady"]
    assert [b["n"] for b in reply["buttons"]][:2] == [1, 2]
    assert reply["buttons"][0]["action"] == "ConfirmCurrent"
    assert committed["event"] == "committed" and committed["actor"] == "user:console"
    assert committed["key"].startswith("decision.") and committed["version"] == 1
    [undo] = outcome["buttons"]  # under what the click committed: Undo, and nothing else
    assert outcome["event"] == "outcome" and (undo["action"], undo["n"]) == ("RevertMutation", 6)
    assert undo["target_id"] == committed["mutation_id"]
    assert error == {"event": "error", "message": "no button 9 is shown"}
    assert state["event"] == "state" and state["key"] == committed["key"]

    code, out, _ = main_out(capsys, workspace, "trace", committed["correlation_id"])
    assert code == 0
    assert "action_clicked" in out and "mutation" in out and "committed" in out
    code, out, _ = main_out(capsys, workspace, "trace", "no-such-id")
    assert code == 1 and "nothing has correlation id" in out
    with pytest.raises(SystemExit) as usage:
        main(["--workspace", workspace, "trace", "x", "--scan", "0"])
    assert usage.value.code == 2


def main_out(
    capsys: pytest.CaptureFixture[str], workspace: str, *argv: str
) -> tuple[int, str, str]:
    code = main(["--workspace", workspace, *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_mode_shows_numbered_buttons_and_do_by_type(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    lines = [
        "how about BRB?",
        "/do SwitchScene",
        "/do Nonsense",
        "/as moderator:sam",
        "/bogus",
        "/quit",
        "never read",
    ]
    code, out, _ = console(capsys, monkeypatch, workspace, lines)
    assert code == 0
    assert "assistant: Candidate: BRB" in out
    assert "[1] Switch scene" in out and "beats: SceneOnTheTable, CandidateReady" in out
    assert 'assistant: Committed: set scene.name "BRB" (v1) (by user:console)' in out
    assert "Nonsense is not an action this bot knows." in out
    assert "(you are now moderator:sam)" in out and "unknown command /bogus" in out
    assert "never read" not in out


def two_consoles(app: App) -> tuple[Console, Console, list[str], list[str]]:
    said_a: list[str] = []
    said_b: list[str] = []
    a = Console(app.runtime(use_env=False), "s1", actor("user:alice"), said_a.append, as_json=True)
    b = Console(app.runtime(use_env=False), "s1", actor("user:bob"), said_b.append, as_json=True)
    return a, b, said_a, said_b


def test_a_stale_click_in_the_console_commits_nothing(app: App) -> None:
    a, b, said_a, _ = two_consoles(app)
    a.handle("what if we used postgres")
    b.handle("make it cheaper")  # the candidate moves on while alice still shows v1
    said_a.clear()
    a.handle("/click 1")
    [notice] = events("\n".join(said_a))
    assert notice["event"] == "notice" and notice["text"].startswith("This suggestion changed")
    assert len(app.log) == 0
    said_a.clear()
    a.handle("/click 1")  # the notice brought the current buttons: this one is for v2
    assert [e["event"] for e in events("\n".join(said_a))] == ["committed", "outcome"]
    assert "cheaper" in app.store.entries("decision.")[0].value


def test_odd_console_input_gets_a_clear_answer(app: App) -> None:
    a, _, said, _ = two_consoles(app)
    for line in ["/click \u00b2", "/click -1", "/do confirmcurrent", "/do", "/as nobody"]:
        assert a.handle(line)
    messages = [e["message"] for e in events("\n".join(said))]
    assert messages[0] == messages[1] == "no buttons to click"
    assert (
        messages[2]
        == messages[3]
        == ("/do takes an action type in CamelCase, e.g. /do ConfirmCurrent")
    )
    assert "must look like KIND:ID" in messages[4]


def test_a_button_that_asks_to_be_sure_needs_yes(app: App) -> None:
    a, _, said, _ = two_consoles(app)
    a.buttons = [
        Button(
            action="ConfirmCurrent",
            label="Use this",
            style=ActionStyle.PRIMARY,
            beat="B",
            target_id="c1",
            target_version=1,
            confirm=True,
        )
    ]
    a.handle("/click 1")
    assert events("\n".join(said))[-1]["message"] == (
        '"Use this" asks to be sure: type /click 1 yes'
    )
    a.handle("/click 1 yes")  # goes through: the loop finds nothing on the table
    assert events("\n".join(said))[-1]["event"] == "notice"


def test_the_console_runs_as_a_process(workspace: str) -> None:
    env = {**os.environ, "DELIBERATE_WORKSPACE": workspace}
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run(
        [sys.executable, "-m", "bot.main", "console", "--json"],
        input="what if we held a raffle for subs\n/click 1\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [e["event"] for e in events(done.stdout)] == ["reply", "committed", "outcome"]
