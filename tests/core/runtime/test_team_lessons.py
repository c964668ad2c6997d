"""Clicks teach the workspace's own weights (issue 42), through ``Runtime.send`` on the suite's
Redis: "Use this" after an answer the loop read as no agreement, "Try another angle" after one
it read as agreement; never the turn the candidate answered; once per turn; never another
workspace's; not at all with ``perception.adapt: false``; on the trace; and a table Redis holds
damaged is read as none, never taught over, and cleared by ``deliberate perception reset``."""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from bot.app import App, build_app
from bot.reports.trace import collect
from core.deliberation.actions import ActionType
from core.deliberation.commands import Teach
from core.deliberation.interpretation import ActType
from core.deliberation.messages import UserSaid
from core.deliberation.recent import marks_bits
from core.deliberation.view import View
from core.perception.team import Lesson, TeamWeights, marked, marks
from core.redis.client import RedisClient
from core.runtime.events import Event, OutcomeEvent
from core.runtime.runner import Runtime
from core.runtime.team_weights import TeamStore, parsed
from tests.conftest import delete_workspace, write_config
from tests.core.runtime.test_round_trips import press
from tests.factories import actor

ALICE, BOB = actor("user:alice"), actor("user:bob")
IDEA = "what if we used postgres for the orders service"
ANSWER = "roger that"  # read as a tangent after an idea: the team means yes
PLANTED = b"\xff not a table"  # bytes that are no UTF-8 text


def say(runtime: Runtime, text: str, who: Any, session: str) -> tuple[View, list[Event]]:
    events = runtime.send(session, UserSaid(text=text, actor=who))
    [view] = [e for e in events if isinstance(e, View)]
    return view, events


def outcomes(events: list[Event]) -> list[str]:
    return [e.outcome for e in events if isinstance(e, OutcomeEvent)]


def team_of(app: App) -> TeamWeights | None:
    return parsed(app.redis.get(TeamStore(app.redis, app.store.workspace).key))


def taught_rows(app: App, correlation_id: str) -> list[dict[str, Any]]:
    return [row for row in collect(app, correlation_id) if row.get("event") == "perception.taught"]


def test_use_this_after_an_answer_read_as_no_agreement_teaches_it(app: App) -> None:
    runtime = app.runtime(use_env=False)
    idea, _ = say(runtime, IDEA, ALICE, "s1")
    say(runtime, ANSWER, BOB, "s1")
    read = runtime.sessions.load("s1").interaction.recent[-1]
    # its words and what it read around it, hashed (its words alone would not say "after an idea")
    assert read.act is ActType.TANGENT and marks_bits(read.marks) > marked(ANSWER)
    done = press(runtime, idea, ActionType.CONFIRM_CURRENT, uuid.uuid4().hex, "s1")
    assert outcomes(done) == ["committed"]
    team = team_of(app)
    assert team is not None and team.lessons == 1
    commit, tangent = list(ActType).index(ActType.COMMIT), list(ActType).index(ActType.TANGENT)
    assert all(row[commit] > 0 > row[tangent] for row in team.rows.values())
    # the newest turn taught once: its marks are cleared
    assert runtime.sessions.load("s1").interaction.recent[-1].marks == ""
    [row] = taught_rows(app, done[0].correlation_id)
    assert row["data"] == {"was": "commit", "read_as": "tangent", "lessons": 1}


def test_use_this_on_the_idea_itself_teaches_nothing(app: App) -> None:
    runtime = app.runtime(use_env=False)
    idea, _ = say(runtime, IDEA, ALICE, "s1")
    done = press(runtime, idea, ActionType.CONFIRM_CURRENT, uuid.uuid4().hex, "s1")
    assert outcomes(done) == ["committed"]
    assert team_of(app) == TeamWeights()  # nothing held
    assert app.redis.get(TeamStore(app.redis, app.store.workspace).key) is None


def test_try_another_angle_after_an_answer_read_as_agreement_teaches_it(app: App) -> None:
    runtime = app.runtime(use_env=False)
    idea, _ = say(runtime, IDEA, ALICE, "s1")
    say(runtime, "sounds good", BOB, "s1")
    assert runtime.sessions.load("s1").interaction.recent[-1].act is ActType.COMMIT
    events = press(runtime, idea, ActionType.ALTERNATIVE_CURRENT, uuid.uuid4().hex, "s1")
    team = team_of(app)
    assert team is not None and team.lessons == 1
    correlation = next(e for e in events if isinstance(e, View)).correlation_id
    [row] = taught_rows(app, correlation)
    assert row["data"] == {"was": "not commit", "read_as": "commit", "lessons": 1}


def test_use_this_after_an_answer_read_as_agreement_teaches_nothing(app: App) -> None:
    runtime = app.runtime(use_env=False)
    idea, _ = say(runtime, IDEA, ALICE, "s1")
    say(runtime, "sounds good", BOB, "s1")
    assert outcomes(press(runtime, idea, ActionType.CONFIRM_CURRENT, uuid.uuid4().hex, "s1")) == [
        "committed"
    ]
    assert team_of(app) == TeamWeights()


def test_lessons_change_how_the_workspace_reads_and_no_other(
    app: App, redis_client: RedisClient
) -> None:
    runtime = app.runtime(use_env=False)
    services = ["orders", "billing", "search", "audit", "mail", "media", "auth", "jobs"]
    for n, service in enumerate(services):  # threads, each a "roger that" meant as yes
        session = f"s{n}"
        idea, _ = say(
            runtime, f"what if we used postgres for the {service} service", ALICE, session
        )
        say(runtime, ANSWER, BOB, session)
        assert outcomes(
            press(runtime, idea, ActionType.CONFIRM_CURRENT, uuid.uuid4().hex, session)
        ) == ["committed"]
        if runtime.sessions.load(session).interaction.recent[-1].act is ActType.COMMIT:
            break
    team = team_of(app)
    assert team is not None and 1 <= team.lessons <= 8
    # a new thread of this workspace reads "roger that" as agreement, by the team's weights
    say(runtime, "what if we used postgres for the ledger service", ALICE, "fresh")
    _, events = say(runtime, ANSWER, BOB, "fresh")
    read = [row for row in collect(app, events[0].correlation_id) if row["event"] == "classified"]
    assert read[0]["data"]["routed"] == "commit"
    assert read[0]["data"]["classifier"] == "embedded+team"
    # another workspace on the same Redis reads it as the shipped model does
    other = build_app(f"test-{uuid.uuid4().hex[:12]}", client=redis_client)
    try:
        elsewhere = other.runtime(use_env=False)
        say(elsewhere, IDEA, ALICE, "fresh")
        _, events = say(elsewhere, ANSWER, BOB, "fresh")
        rows = collect(other, events[0].correlation_id)
        read = [row for row in rows if row["event"] == "classified"]
        assert read[0]["data"]["routed"] == "tangent"
        assert read[0]["data"]["classifier"] == "embedded"
        assert team_of(other) == TeamWeights()
    finally:
        delete_workspace(redis_client, other.store.workspace)


def test_adapt_false_keeps_no_marks_and_learns_nothing(
    redis_client: RedisClient, workspace: str, tmp_path: Path
) -> None:
    config = write_config(tmp_path, "perception:\n  adapt: false\n")
    app = build_app(workspace, [config], client=redis_client)
    runtime = app.runtime(use_env=False)
    idea, _ = say(runtime, IDEA, ALICE, "s1")
    say(runtime, ANSWER, BOB, "s1")
    assert runtime.sessions.load("s1").interaction.recent[-1].marks == ""
    assert outcomes(press(runtime, idea, ActionType.CONFIRM_CURRENT, uuid.uuid4().hex, "s1")) == [
        "committed"
    ]
    assert app.redis.get(TeamStore(app.redis, workspace).key) is None
    # a table someone left is not read either
    store = TeamStore(app.redis, workspace)
    strong = TeamWeights()
    for n in range(10):
        strong = strong.learned(Lesson(marks(ANSWER), ActType.COMMIT, ActType.TANGENT, str(n)), 0)
    app.redis.set(store.key, strong.model_dump_json())
    say(runtime, IDEA, ALICE, "s2")
    _, events = say(runtime, ANSWER, BOB, "s2")
    read = [row for row in collect(app, events[0].correlation_id) if row["event"] == "classified"]
    assert read[0]["data"]["classifier"] == "embedded"


def test_a_damaged_table_is_read_as_none_and_never_taught_over(app: App) -> None:
    store = TeamStore(app.redis, app.store.workspace)
    app.redis.set(store.key, PLANTED)
    runtime = app.runtime(use_env=False)
    idea, _ = say(runtime, IDEA, ALICE, "s1")
    say(runtime, ANSWER, BOB, "s1")
    done = press(runtime, idea, ActionType.CONFIRM_CURRENT, uuid.uuid4().hex, "s1")
    assert outcomes(done) == ["committed"]  # the click does what it does
    assert _held_as_planted(app, store.key)  # and writes nothing over it
    [row] = taught_rows(app, done[0].correlation_id)
    assert row["data"] == {"was": "commit", "read_as": "tangent", "skipped": "unreadable"}
    assert store.reset() == (True, None)
    assert app.redis.get(store.key) is None


def _held_as_planted(app: App, key: str) -> bool:
    """Whether ``key`` holds the bytes planted (compared in Redis: this client decodes text)."""
    same = "return redis.call('GET', KEYS[1]) == ARGV[1] and 1 or 0"
    return bool(app.redis.eval(same, 1, key, PLANTED))  # type: ignore[no-untyped-call]


def test_lessons_given_at_once_all_count_and_one_sent_again_counts_once(
    app: App, redis_client: RedisClient
) -> None:
    errors: list[BaseException] = []

    def teach(thread: int) -> None:
        try:
            for n in range(5):
                lesson = Lesson(marks(ANSWER), ActType.COMMIT, ActType.TANGENT, f"{thread}-{n}")
                TeamStore(redis_client, app.store.workspace).learn(lesson)
        except BaseException as error:  # (a thread's error is the test's)
            errors.append(error)

    threads = [threading.Thread(target=teach, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    team = team_of(app)
    assert team is not None and team.lessons == 20
    held = json.loads(app.redis.get(TeamStore(app.redis, app.store.workspace).key) or "{}")
    assert held["lessons"] == 20
    # a lesson sent again (its answer lost on the way back) teaches nothing more
    again = Lesson(marks(ANSWER), ActType.COMMIT, ActType.TANGENT, "3-4")
    assert TeamStore(redis_client, app.store.workspace).learn(again) == team


def test_a_click_whose_lesson_is_sent_again_teaches_once(app: App) -> None:
    """The runtime sends a lesson again when Redis cuts it off; the lesson's id is the click's:
    the second changes nothing, and writes no second line on the trace."""
    runtime = app.runtime(use_env=False)
    idea, _ = say(runtime, IDEA, ALICE, "s1")
    say(runtime, ANSWER, BOB, "s1")
    done = press(runtime, idea, ActionType.CONFIRM_CURRENT, uuid.uuid4().hex, "s1")
    cid = done[0].correlation_id
    cmd = Teach(marks(ANSWER), ActType.COMMIT, ActType.TANGENT, cid)
    before = team_of(app)
    assert runtime.team.teach(cmd, "s1", app.trace) == before
    assert len(taught_rows(app, cid)) == 1


@pytest.mark.parametrize(
    "planted",
    [
        "hash",  # another type than a string
        json.dumps({"rows": {"3": [float("nan"), 0.1, 0, 0, 0]}}).replace("NaN", "NaN"),
        json.dumps({"rows": {}, "taught_ms": 10**17}),  # a lesson in the year 3 million
        "x" * (300 * 1024),  # past what a table can be
    ],
)
def test_what_is_no_table_never_fails_a_turn(app: App, planted: str) -> None:
    store = TeamStore(app.redis, app.store.workspace)
    if planted == "hash":
        app.redis.hset(store.key, "rows", "{}")
    else:
        app.redis.set(store.key, planted)
    runtime = app.runtime(use_env=False)
    idea, _ = say(runtime, IDEA, ALICE, "s1")
    _, events = say(runtime, ANSWER, BOB, "s1")
    read = [row for row in collect(app, events[0].correlation_id) if row["event"] == "classified"]
    assert read[0]["data"]["classifier"] == "embedded"  # the shipped model alone
    done = press(runtime, idea, ActionType.CONFIRM_CURRENT, uuid.uuid4().hex, "s1")
    assert outcomes(done) == ["committed"]
    [row] = taught_rows(app, done[0].correlation_id)
    assert row["data"]["skipped"] == "unreadable"
    assert store.load() is None
    assert store.reset() == (True, None) and store.load() == TeamWeights()
