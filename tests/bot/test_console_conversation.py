"""Conversations in the console as people have them (stdin not a terminal, ``--json``
events): what people say is kept in the candidate through refinements and Expand, a decision
said outright is one click away, template filler is never committed, a button keeps its
number through a resume, a resumed session shows what is on the table, and the topic is
named, not guessed."""

from __future__ import annotations

import io
import json
import sys
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.console import ButtonNumbers
from bot.main import main
from core.deliberation.beats import ActionStyle
from core.deliberation.placeholders import placeholder_in
from core.deliberation.view import Button
from core.redis.client import RedisClient

IDEA = "what if we used managed postgres on RDS with one read replica"
PITR = "add point-in-time recovery to it"
REGION = "keep it in eu-west-1 only"


def run(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    workspace: str,
    session: str,
    lines: list[str],
) -> list[dict[str, Any]]:
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    code = main(["--workspace", workspace, "console", "--session", session, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def test_refinements_survive_expand_into_the_committed_value(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    lines = [IDEA, PITR, REGION, "/do ExpandCurrent", "/do ConfirmCurrent", "/state decision."]
    events = run(capsys, monkeypatch, workspace, "refine", lines)
    replies = [e for e in events if e["event"] == "reply"]
    on_table = [e["candidate"]["text"] for e in replies]
    first, second = on_table[1], on_table[2]
    assert first == f"{IDEA}; {PITR}"
    assert second == f"{first}; {REGION}"  # the second refinement joins the first
    expanded = replies[3]
    assert expanded["candidate"]["text"] == second  # Expand kept it, and asked instead
    assert "who owns it" in expanded["text"]
    assert expanded["buttons"][0]["action"] == "ConfirmCurrent"
    [committed] = [e for e in events if e["event"] == "committed"]
    [state] = [e for e in events if e["event"] == "state"]
    # what is committed is exactly what the last view showed on the table
    assert state["key"] == committed["key"] and state["value"] == second
    assert placeholder_in(state["value"]) is None


def test_a_decision_said_outright_is_one_click_away(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    said = "let's go with managed postgres on RDS, with one read replica"
    events = run(capsys, monkeypatch, workspace, "outright", [said, "/state decision."])
    [reply] = [e for e in events if e["event"] == "reply"]
    assert reply["candidate"]["text"] == "managed postgres on RDS, with one read replica"
    assert reply["buttons"][0]["action"] == "ConfirmCurrent"  # offered, not done
    assert not [e for e in events if e["event"] == "committed"]
    assert [e for e in events if e["event"] == "state"] == []  # nothing decided yet
    events = run(capsys, monkeypatch, workspace, "outright", ["/do ConfirmCurrent"])
    [committed] = [e for e in events if e["event"] == "committed"]
    assert committed["value"] == "managed postgres on RDS, with one read replica"


def test_a_button_keeps_its_number_and_a_gone_one_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    lines = ["how about BRB?", "/click 1", "/click 1", "/click 5", "/click 5", "/state"]
    events = run(capsys, monkeypatch, workspace, "numbers", lines)
    first = events[0]
    numbered = {b["action"]: b["n"] for b in first["buttons"]}
    assert numbered["SwitchScene"] == 1 and numbered["AddCurrentToArtifact"] == 5
    after_switch = next(e for e in events if e["event"] == "outcome")
    again = {b["action"]: b["n"] for b in after_switch["buttons"]}
    assert "SwitchScene" not in again  # done: no longer offered, and nobody else is 1
    assert {a: n for a, n in again.items() if a in numbered} == {
        a: n for a, n in numbered.items() if a in again
    }  # every button still shown kept its number
    assert after_switch["nudge"] is None  # the switch is made: no more asking for it
    errors = [e["message"] for e in events if e["event"] == "error"]
    assert errors == [
        'button 1 ("Switch scene") is no longer offered: nothing was done',
        'button 5 ("Add to doc") is no longer offered: nothing was done',
    ]
    keys = sorted(e["key"] for e in events if e["event"] == "state")
    assert keys[0].startswith("artifact.") and keys[1] == "scene.name" and len(keys) == 2


def test_a_resumed_session_shows_its_candidate_and_keeps_its_numbers(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    run(capsys, monkeypatch, workspace, "resume", [IDEA, PITR])
    events = run(capsys, monkeypatch, workspace, "resume", ["/show"])
    [shown] = events
    assert shown["ephemeral"] and shown["candidate"]["text"] == f"{IDEA}; {PITR}"
    assert shown["buttons"][0] == shown["buttons"][0] | {"action": "ConfirmCurrent", "n": 1}
    assert shown["decides"] == "decision.managed-postgres-rds-one"
    # a typed number is a click after a resume as before it: the buttons last shown are kept
    events = run(capsys, monkeypatch, workspace, "resume", ["1"])
    committed, view = events[:2]
    assert committed["event"] == "committed" and committed["value"] == f"{IDEA}; {PITR}"
    [undo] = [b for b in view["buttons"] if b["action"] == "RevertMutation"]
    assert undo["n"] > 5  # numbered after the five the candidate had, never one of theirs
    events = run(capsys, monkeypatch, workspace, "resume", [str(undo["n"])])
    assert events[0]["event"] == "committed" and events[0]["key"] == committed["key"]
    assert not [e for e in events if e["event"] in ("reply", "error")]  # a click, not a turn
    code = main(["--workspace", workspace, "console", "--session", "resume", "--json"])
    assert code == 0 and "resumed: /show" in capsys.readouterr().err


def test_a_number_from_another_session_is_text_here(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    run(capsys, monkeypatch, workspace, "first", [IDEA])
    events = run(capsys, monkeypatch, workspace, "second", ["1"])
    assert [e["event"] for e in events] == ["reply"]  # an answer ("how many?" "1")


def test_the_topic_is_what_was_asked_and_people_can_rename_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    lines = [
        "We need to pick a database for the new billing service. Ideas?",
        "what about postgres on RDS",
    ]
    events = run(capsys, monkeypatch, workspace, "topic", lines)
    asked, idea = (e for e in events if e["event"] == "reply")
    assert asked["candidate"] is None and asked["buttons"] == []  # the question is no idea
    assert idea["candidate"]["text"] == "postgres on RDS"
    assert idea["decides"] == "decision.database-billing-service"  # shown before a commit
    events = run(
        capsys, monkeypatch, workspace, "topic", ["/topic billing DB", "/do ConfirmCurrent"]
    )
    renamed = events[0]
    assert renamed["text"] == 'Topic: "billing DB". Use this will decide decision.billing-db.'
    assert renamed["decides"] == "decision.billing-db"
    committed = next(e for e in events if e["event"] == "committed")
    assert committed["key"] == "decision.billing-db"


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.lists(st.sampled_from(range(8)), max_size=5), max_size=12),
    st.lists(st.booleans(), min_size=12, max_size=12),
)
def test_numbers_are_given_once_and_kept(
    redis_client: RedisClient, workspace: str, views: list[list[int]], resumes: list[bool]
) -> None:
    """Two consoles on one session (one of them started anew at random points, as a resume
    starts one) number alike, and never give a number twice."""
    session = f"n-{uuid.uuid4().hex}"

    def console() -> ButtonNumbers:
        return ButtonNumbers(redis_client, workspace, session, 60_000)

    consoles, seen = [console(), console()], {}
    for step, view in enumerate(views):
        if resumes[step]:
            consoles[step % 2] = console()
        shown = [
            Button(
                action=f"A{k}",
                label=f"L{k}",
                style=ActionStyle.DEFAULT,
                beat="b",
                target_id="c",
                target_version=1,
            )
            for k in dict.fromkeys(view)
        ]
        numbers = consoles[step % 2]
        for button in shown:
            n = numbers.of(button)
            assert seen.setdefault(button.action, n) == n  # kept, by every console
        for button in shown:
            assert consoles[(step + 1) % 2].find(seen[button.action], shown) == button
            assert consoles[(step + 1) % 2].label(seen[button.action]) == button.label
        numbers.remember(shown)
        assert console().shown() == shown
    assert sorted(seen.values()) == list(range(1, len(seen) + 1))  # never given twice


def test_after_undo_the_candidate_and_its_buttons_return(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    events = run(capsys, monkeypatch, workspace, "undo", [IDEA, "1"])
    offered = {b["action"]: b["n"] for b in events[0]["buttons"]}
    [undo] = events[-1]["buttons"]
    assert undo["action"] == "RevertMutation"
    events = run(capsys, monkeypatch, workspace, "undo", [str(undo["n"]), "/state decision."])
    reverted, view = events[:2]
    assert reverted["event"] == "committed" and reverted["value"] is None
    assert view["candidate"]["text"] == IDEA
    assert {b["action"]: b["n"] for b in view["buttons"]} == offered  # the same numbers
    assert [e for e in events if e["event"] == "state"] == []  # undone: nothing decided
    events = run(capsys, monkeypatch, workspace, "undo", ["1", "/state decision."])
    committed = events[0]
    assert committed["event"] == "committed" and committed["value"] == IDEA
    assert not committed["duplicate"]  # a new commit, not the first one's idempotent echo
    [state] = [e for e in events if e["event"] == "state"]
    assert state["value"] == IDEA and state["version"] == 3


def test_undo_of_another_commit_leaves_the_decision_alone(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    """Undo under "Add to doc" is not an undo of the decision: the thread stays decided."""
    events = run(capsys, monkeypatch, workspace, "doc", [IDEA, "1"])
    decided_view = events[-1]
    assert [b["action"] for b in decided_view["buttons"]] == ["RevertMutation"]
    events = run(capsys, monkeypatch, workspace, "doc", ["/do AddCurrentToArtifact"])
    [undo] = [b for b in events[-1]["buttons"] if b["action"] == "RevertMutation"]
    events = run(capsys, monkeypatch, workspace, "doc", [str(undo["n"])])
    assert events[0]["event"] == "committed"
    assert "ConfirmCurrent" not in [b["action"] for b in events[1]["buttons"]]


def test_no_and_go_back_are_read_as_people_mean_them(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    lines = [
        "how about mysql with galera",
        "what about postgres with read replicas",
        "no, go back to the previous one",
        "nah, not that either",
        "same",
    ]
    events = run(capsys, monkeypatch, workspace, "stances", lines)
    replies = [e for e in events if e["event"] == "reply"]
    back = replies[2]
    assert back["text"] == "Back on the table: mysql with galera"
    assert back["candidate"]["text"] == "mysql with galera" and back["mode"] == "exploring"
    set_aside = replies[3]
    assert set_aside["candidate"] is None  # nothing offered to commit
    assert all(b["action"] != "ConfirmCurrent" for b in set_aside["buttons"])
    assert not [e for e in events if e["event"] == "committed"]  # no words commit
    events = run(capsys, monkeypatch, workspace, "stances", ["go back to the previous one"])
    [again] = [e for e in events if e["event"] == "reply"]
    assert again["candidate"]["text"] == "mysql with galera"
    events = run(capsys, monkeypatch, workspace, "stances", ["+1"])
    [agreed] = [e for e in events if e["event"] == "reply"]
    assert agreed["mode"] == "deciding" and agreed["buttons"][0]["action"] == "ConfirmCurrent"


def test_plain_edits_refine_the_candidate_rather_than_replace_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, workspace: str
) -> None:
    """The new user's turns of the issue, in the console as they typed them."""
    lines = [
        "how about a launch webinar on March 12",
        "and announce it a week before on the blog",
        "make sure support is staffed that day",
        "change March 12 to March 19",
    ]
    events = run(capsys, monkeypatch, workspace, "edits", lines)
    on_table = [e["candidate"]["text"] for e in events if e["event"] == "reply"]
    assert on_table == [
        "a launch webinar on March 12",
        "a launch webinar on March 12; announce it a week before on the blog",
        "a launch webinar on March 12; announce it a week before on the blog; "
        "support is staffed that day",
        "a launch webinar on March 19; announce it a week before on the blog; "
        "support is staffed that day",
    ]
    ids = {e["candidate"]["id"] for e in events if e["event"] == "reply"}
    assert len(ids) == 1  # one candidate, refined: never replaced by an edit
