"""``console --session NAME --topic X`` on a session that has another topic: the session
keeps its topic (renaming what it decides is ``/topic``'s, said in the session), and the
console says so in one line instead of ignoring ``--topic`` silently."""

from __future__ import annotations

import pytest

from bot.app import App
from tests.bot.cli.process import run
from tests.bot.test_console import console

RESUMED = "deliberate console: session s1 (resumed: /show shows what is on the table)"


def topic(app: App) -> str:
    return app.runtime(use_env=False).queries.interaction("s1").topic


def test_resuming_with_another_topic_keeps_the_sessions_and_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, app: App, workspace: str
) -> None:
    code, _, err = console(
        capsys, monkeypatch, workspace, ["we need to pick a database"], "--topic", "billing db"
    )
    assert code == 0 and err == "deliberate console: session s1\n" and topic(app) == "billing db"
    # the same topic, spaced otherwise: nothing to say
    code, _, err = console(capsys, monkeypatch, workspace, ["/quit"], "--topic", " billing  db")
    assert (code, err) == (0, RESUMED + "\n")
    code, _, err = console(capsys, monkeypatch, workspace, ["/quit"], "--topic", "search engine")
    assert code == 0 and err.splitlines() == [
        RESUMED,
        '(session s1 already has the topic "billing db"; --topic search engine was not '
        "applied: type /topic search engine to rename it)",
    ]
    assert topic(app) == "billing db"
    console(capsys, monkeypatch, workspace, ["/topic search engine", "/quit"])
    assert topic(app) == "search engine"


def test_a_kept_topic_is_shown_as_text_and_a_bad_topic_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, app: App, workspace: str
) -> None:
    steering = "db\x1b]0;a title\x07\u202e"
    console(capsys, monkeypatch, workspace, ["we need to pick a database"], "--topic", steering)
    assert topic(app) == steering
    code, _, err = console(capsys, monkeypatch, workspace, ["/quit"], "--topic", "other")
    assert code == 0
    assert '"db\\u001b]0;a title\\u0007\\u202e"; --topic other was not applied' in err
    for bad in ("", "   ", "x" * 201):
        code, out, err = run(capsys, workspace, "console", "--session", "s2", "--topic", bad)
        assert (code, out) == (2, "") and "a topic is 1 to 200 characters" in err
    assert not app.runtime(use_env=False).queries.has_session("s2")
