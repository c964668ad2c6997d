"""The loop run for real: the runtime against Redis, offline (embedded classifier, template
responder). Whole conversations, clicks that commit once, stale and forbidden clicks that
commit nothing, racing turns, and sessions that outlive the process that started them."""

from __future__ import annotations

import threading
from importlib.resources import files
from pathlib import Path

from redis import Redis

from bot.app import App, build_app
from bot.reports.trace import collect
from core.deliberation.actions import ActionType
from core.deliberation.memory import ThreadStatus
from core.deliberation.messages import ActionClicked, UserSaid
from core.deliberation.view import View, ViewKind
from core.runtime.events import Event, OutcomeEvent
from core.runtime.runner import Runtime
from core.runtime.sessions import SessionStore
from tests.conftest import write_config
from tests.factories import actor
from tests.reads import transcript

ALICE, BOB = actor("user:alice"), actor("user:bob")
SAM = actor("moderator:sam")


def views(events: list[Event]) -> list[View]:
    return [e for e in events if isinstance(e, View)]


def outcomes(events: list[Event]) -> list[OutcomeEvent]:
    return [e for e in events if isinstance(e, OutcomeEvent)]


def say(runtime: Runtime, text: str, who=ALICE, session: str = "s1") -> View:
    [view] = views(runtime.send(session, UserSaid(text=text, actor=who)))
    return view


def press(
    runtime: Runtime, view: View, action: str, click_id: str, who=ALICE, session: str = "s1"
) -> list[Event]:
    button = next(b for b in view.buttons if b.action == action)
    msg = ActionClicked(
        action=action,
        target_id=button.target_id,
        expected_version=button.target_version,
        click_id=click_id,
        actor=who,
    )
    return runtime.send(session, msg)


def test_a_conversation_ends_in_one_committed_decision(app: App) -> None:
    runtime = app.runtime(use_env=False)
    assert say(runtime, "which database for the billing service?").buttons == []
    first = say(runtime, "what if we used postgres with read replicas")
    assert first.candidate is not None and first.fired == ["CandidateReady"]
    refined = say(runtime, "make it a bit more managed")
    assert refined.candidate.id == first.candidate.id and refined.candidate.version == 2
    assert len(app.log) == 0  # talk changes nothing
    events = press(runtime, refined, ActionType.CONFIRM_CURRENT, "click-1")
    [outcome] = outcomes(events)
    assert outcome.outcome == "committed" and outcome.key == "decision.database-billing-service"
    entry = app.store.get("decision.database-billing-service")
    assert entry is not None and entry.value == refined.candidate.text
    assert entry.updated_by == ALICE and entry.meta["candidateVersion"] == 2
    [after] = views(events)
    assert after.kind is ViewKind.OUTCOME and "user:alice" in after.text
    session = SessionStore(app.redis, app.store.workspace).load("s1")
    assert session.interaction.thread_status is ThreadStatus.DECIDED
    assert session.working.pinned_decisions == [refined.candidate.text]


def test_racing_clicks_of_two_people_commit_once(app: App) -> None:
    runtimes = [app.runtime(use_env=False) for _ in range(4)]
    view = say(runtimes[0], "what if we used postgres")
    results: list[list[Event]] = []

    def click(n: int) -> None:
        who = actor(f"user:p{n}")
        results.append(press(runtimes[n], view, ActionType.CONFIRM_CURRENT, f"race-{n}", who))

    threads = [threading.Thread(target=click, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(app.log) == 1
    committed = [o for events in results for o in outcomes(events) if o.outcome == "committed"]
    assert len(committed) >= 1 and sum(not o.duplicate for o in committed) == 1


def test_a_double_click_and_another_persons_click_commit_once(app: App) -> None:
    runtime = app.runtime(use_env=False)
    view = say(runtime, "what if we used postgres")
    press(runtime, view, ActionType.CONFIRM_CURRENT, "click-1")
    again = press(runtime, view, ActionType.CONFIRM_CURRENT, "click-1")
    other = press(runtime, view, ActionType.CONFIRM_CURRENT, "click-2", who=BOB)
    assert len(app.log) == 1
    assert outcomes(again) == [] and views(again)[0].ephemeral
    assert views(other)[0].text == "Already done by user:alice."


def test_a_stale_button_commits_nothing_and_shows_the_current_candidate(app: App) -> None:
    runtime = app.runtime(use_env=False)
    old = say(runtime, "what if we used postgres")
    new = say(runtime, "make it cheaper")
    [notice] = views(press(runtime, old, ActionType.CONFIRM_CURRENT, "click-1"))
    assert notice.ephemeral and notice.text.startswith("This suggestion changed")
    assert new.candidate.text in notice.text
    assert len(app.log) == 0


def test_artifact_task_and_alternative(app: App) -> None:
    runtime = app.runtime(use_env=False)
    view = say(runtime, "what if we ran a weekly demo", session="s2")
    press(runtime, view, ActionType.ADD_CURRENT_TO_ARTIFACT, "a1", session="s2")
    press(runtime, view, ActionType.DERIVE_ENTITY_FROM_CURRENT, "a2", session="s2")
    [artifact] = app.store.entries("artifact.")
    assert artifact.value == ["what if we ran a weekly demo"]
    [task] = app.store.entries("entity.task.")
    assert task.value["title"] == "what if we ran a weekly demo"
    [aside] = views(press(runtime, view, ActionType.ALTERNATIVE_CURRENT, "a3", session="s2"))
    assert aside.candidate is None
    # nothing on the table but the way back to what was set aside
    [back] = aside.buttons
    assert back.action == ActionType.RESTORE_CANDIDATE
    assert back.label == "Back to: what if we ran a weekly demo"
    session = SessionStore(app.redis, app.store.workspace).load("s2")
    assert session.working.rejected_ideas == ["what if we ran a weekly demo"]


def protected_action_app(tmp_path: Path, client: Redis, workspace: str) -> App:
    shipped = files("core.config").joinpath("default.yaml").read_text(encoding="utf-8")
    extra = 'actions:\n  StopStream:\n    key: stream.state\n    value: "off"\n'
    path = write_config(tmp_path, shipped.replace("actions:\n", extra, 1))
    return build_app(workspace, config_path=path, client=client)


def test_a_protected_key_refuses_a_user_and_takes_a_moderator(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    app = protected_action_app(tmp_path, redis_client, workspace)
    runtime = app.runtime(use_env=False)
    say(runtime, "what if we ended the stream early tonight")
    session = SessionStore(app.redis, workspace).load("s1")
    candidate = session.interaction.candidate
    assert candidate is not None

    def stop(who, click_id):  # an app action no beat surfaces: /do StopStream in a console
        msg = ActionClicked(
            action="StopStream",
            target_id=candidate.id,
            expected_version=candidate.version,
            click_id=click_id,
            actor=who,
        )
        return runtime.send("s1", msg)

    refused = stop(ALICE, "x1")
    assert [o.reason for o in outcomes(refused)] == ["protected"]
    assert views(refused)[0].ephemeral and app.store.get("stream.state") is None
    done = stop(SAM, "x2")
    assert [o.outcome for o in outcomes(done)] == ["committed"]
    assert app.store.get("stream.state").value == "off"


def test_racing_turns_of_one_session_lose_nothing(app: App) -> None:
    runtimes = [app.runtime(use_env=False) for _ in range(2)]

    def talk(runtime: Runtime, who: str) -> None:
        for n in range(8):
            runtime.send("race", UserSaid(text=f"idea {who} {n}: what if we", actor=ALICE))

    threads = [threading.Thread(target=talk, args=(r, str(i))) for i, r in enumerate(runtimes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    session = SessionStore(app.redis, app.store.workspace).load("race")
    assert session.interaction.turn_count == 16
    lines = transcript(app.redis, app.store.workspace, "race")
    assert len(lines) == 32  # each turn: what was said, and the reply


def test_a_session_survives_a_restart(redis_client: Redis, workspace: str) -> None:
    first = build_app(workspace, client=redis_client).runtime(use_env=False)
    view = say(first, "what if we used postgres")
    restarted = build_app(workspace, client=redis_client).runtime(use_env=False)
    [outcome] = outcomes(press(restarted, view, ActionType.CONFIRM_CURRENT, "c1"))
    assert outcome.outcome == "committed"


def test_trace_follows_a_turn_and_a_click(app: App) -> None:
    runtime = app.runtime(use_env=False)
    view = say(runtime, "what if we used postgres")
    turn = [s["event"] for s in collect(app, view.correlation_id)]
    assert turn[:2] == ["user_said", "classified"]
    assert {"assistant_replied", "beats"} <= set(turn)
    click = views(press(runtime, view, ActionType.CONFIRM_CURRENT, "c1"))[0]
    steps = collect(app, click.correlation_id)
    events = [s["event"] for s in steps]
    assert events[0] == "action_clicked" and "mutation" in events and "action_done" in events
    [mutation] = [s["data"] for s in steps if s["event"] == "mutation"]
    assert mutation["id"].startswith("act-") and mutation["correlationId"] == click.correlation_id


def test_a_thread_never_overwrites_another_threads_decision(app: App) -> None:
    runtime = app.runtime(use_env=False)
    for session in ("a", "b"):
        say(runtime, "launch plan for next week", session=session)
    first = say(runtime, "how about a soft launch on monday", session="a")
    second = say(runtime, "how about a big bang on friday", session="b")
    press(runtime, first, ActionType.CONFIRM_CURRENT, "a1", session="a")
    refused = press(runtime, second, ActionType.CONFIRM_CURRENT, "b1", session="b")
    [outcome] = outcomes(refused)
    assert outcome.reason == "conflict"
    assert "changed elsewhere" in outcome.message and "soft launch" in outcome.message
    assert views(refused)[0].ephemeral
    [decision] = app.store.entries("decision.")
    assert decision.value == "a soft launch on monday" and decision.version == 1
    # its own decision a thread may change: it knows the version it committed
    again = say(runtime, "make it tuesday", session="a")
    press(runtime, again, ActionType.CONFIRM_CURRENT, "a2", session="a")
    [decision] = app.store.entries("decision.")
    assert decision.version == 2 and "tuesday" in decision.value
