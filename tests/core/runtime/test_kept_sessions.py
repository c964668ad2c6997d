"""A process keeps each session as it last read or saved it, and a send starts from that
without reading it (issue 45): the save's version check, and the token of the save that
made that version, tell it when someone else saved meanwhile. What it keeps is never
changed in place; what another process did is never overwritten; what was said is never
lost, also when the reading of it fails."""

from __future__ import annotations

from typing import Any

import pytest

from bot.app import App, build_app
from core.deliberation.actions import ActionType
from core.deliberation.interpretation import ActType, Target, TurnInterpretation
from core.deliberation.messages import UserSaid
from core.deliberation.recent import TurnContext
from core.deliberation.view import View
from core.perception.classifier import ReadsAlone
from core.perception.embedded import EmbeddedClassifier
from core.redis.client import RedisClient
from core.runtime.events import OutcomeEvent
from core.runtime.runner import Runtime
from core.runtime.sessions import SessionStore
from core.runtime.team_weights import TeamStore
from core.state.keys import WorkspaceKeys
from tests.factories import actor, clicked
from tests.reads import transcript
from tests.round_trips import Trips, counting_copy

ANN, BOB = actor("user:ann"), actor("user:bob")


def say(runtime: Runtime, text: str, who: Any = ANN, session: str = "s1") -> None:
    runtime.send(session, UserSaid(text=text, actor=who))


@pytest.fixture
def counted(redis_client: RedisClient, workspace: str) -> tuple[Runtime, Trips]:
    """A runtime on a counting copy of the suite's client, its scripts loaded and its
    connections made (on a session of its own)."""
    client, trips = counting_copy(redis_client)
    runtime = build_app(workspace, client=client).runtime(use_env=False)
    say(runtime, "what if we warmed up first", session="warm-up")
    say(runtime, "and a read again", session="warm-up-2")
    return runtime, trips


def test_what_a_process_keeps_is_what_redis_holds(app: App) -> None:
    """After each turn and click, the session a send would start from is the one Redis
    holds (the loop changed nothing of it in place), read back by another store."""
    runtime = app.runtime(use_env=False)
    stored = SessionStore(app.redis, app.store.workspace)

    def held_as_stored() -> None:
        kept = runtime.sessions.known("s1")
        assert kept is not None and kept == stored.load("s1")

    events: list[Any] = []
    for text in ("what if we used postgres", "how many?", "no", "a replica then"):
        events = runtime.send("s1", UserSaid(text=text, actor=ANN))
        held_as_stored()
    for action in (ActionType.CONFIRM_CURRENT, ActionType.REVERT_MUTATION):
        [view] = [e for e in events if isinstance(e, View)]
        events = runtime.send("s1", clicked(view, action, f"k-{action}", ANN))
        outcomes = [e.outcome for e in events if isinstance(e, OutcomeEvent)]
        assert outcomes == ["committed"], action
        held_as_stored()


def test_a_turn_another_process_saved_meanwhile_is_built_on_not_lost(
    counted: tuple[Runtime, Trips], redis_client: RedisClient, workspace: str
) -> None:
    """Ann's process keeps the session as her last turn left it; Bob's turn goes through
    another process; her next turn starts from what she kept, finds his at its first save,
    and is read again in the context his turn made (two round trips more, no read)."""
    ann, trips = counted
    bob = build_app(workspace, client=redis_client).runtime(use_env=False)
    say(ann, "what if we used postgres")
    say(bob, "what about mysql instead", BOB)
    with trips.counting():
        say(ann, "mysql sounds fine")
    # the save that found his, then (nothing waits now) what she said, how it was read,
    # the answer's
    assert trips.count == 4
    session = SessionStore(redis_client, workspace).load("s1")
    assert session.interaction.turn_count == 3
    assert [t.who for t in session.interaction.recent] == ["user:ann", "user:bob", "user:ann"]
    said = [line for line in transcript(redis_client, workspace, "s1") if line[0] != "assistant"]
    assert said == [
        ("user:ann", "what if we used postgres"),
        ("user:bob", "what about mysql instead"),
        ("user:ann", "mysql sounds fine"),
    ]


def test_a_session_gone_and_saved_again_to_the_same_version_is_not_overwritten(
    app: App, redis_client: RedisClient, workspace: str
) -> None:
    """Ann's process keeps version 1 of a session; it expires (deleted here) and Bob's
    process saves it again up to version 1: the versions match, the saves that made them do
    not, so her next turn is built on his (a check of the version alone would have
    overwritten his turn with hers)."""
    ann = app.runtime(use_env=False)
    bob = build_app(workspace, client=redis_client).runtime(use_env=False)
    say(ann, "what if we used postgres")
    kept = ann.sessions.known("s1")
    assert kept is not None and kept.version == 1  # (one save: a turn answered in process)
    redis_client.delete(WorkspaceKeys(workspace).session("s1"))
    say(bob, "what about mysql instead", BOB)
    assert SessionStore(redis_client, workspace).load("s1").version == 1
    say(ann, "mysql sounds fine")
    session = SessionStore(redis_client, workspace).load("s1")
    assert session.interaction.turn_count == 2
    assert [t.who for t in session.interaction.recent] == ["user:bob", "user:ann"]


class Broken(ReadsAlone):
    name = "broken"

    def classify(
        self, text: str, topic: str | None = None, context: TurnContext | None = None
    ) -> TurnInterpretation:
        raise RuntimeError("the classifier broke")


def test_what_was_said_is_saved_when_its_reading_fails(
    app: App, redis_client: RedisClient, workspace: str
) -> None:
    """Words wait for their reading to be saved with it; when the reading fails, they are
    saved anyway (the turn counted, the line in the transcript, on the trace), and the error
    is what the caller hears."""
    runtime = app.runtime(use_env=False)
    say(runtime, "what if we used postgres")
    runtime.classifier = Broken()
    with pytest.raises(RuntimeError, match="the classifier broke"):
        say(runtime, "and a replica")
    session = SessionStore(redis_client, workspace).load("s1")
    assert session.interaction.turn_count == 2
    assert transcript(redis_client, workspace, "s1")[-1] == ("user:ann", "and a replica")
    kept = runtime.sessions.known("s1")
    assert kept is not None and kept.version == session.version


def test_a_model_reading_the_turn_saves_what_was_said_before_it(
    counted: tuple[Runtime, Trips],
) -> None:
    """Only a reading made in this process waits: a classifier that is no such (a model's)
    gets the words saved first, a save of their own (the answer, made in this process,
    waits for the save of its reading)."""
    runtime, trips = counted
    say(runtime, "what if we used postgres")

    class Remote(Broken):
        in_process = False

        def classify(
            self, text: str, topic: str | None = None, context: TurnContext | None = None
        ) -> TurnInterpretation:
            return TurnInterpretation(
                act_type=ActType.REFINE, target=Target.CURRENT_CANDIDATE, confidence=0.9
            )

    runtime.classifier = Remote()
    with trips.counting():
        say(runtime, "with a replica")
    assert trips.count == 2  # what was said; how it was read, with the answer


def test_the_teams_weights_are_read_again_once_a_second_is_past(
    counted: tuple[Runtime, Trips], redis_client: RedisClient, workspace: str
) -> None:
    """A turn within a second of the last read of the workspace's own weights reads
    nothing; past it (``TeamStore.kept`` no longer fresh), the weights are read with the
    session again, and a lesson another process wrote meanwhile is what it reads."""
    runtime, trips = counted
    say(runtime, "what if we used postgres")
    fresh, _ = runtime.team.kept()
    assert fresh
    with trips.counting():
        say(runtime, "with a replica")
    assert trips.count == 1
    other = TeamStore(redis_client, workspace)
    other.reset()  # (another process: an empty table written where none was)
    redis_client.set(other.key, '{"rows": {}, "lessons": 7, "taught_ms": 0}')
    runtime.team.forget()  # as a second having passed
    with trips.counting():
        say(runtime, "and backups")
    assert trips.count == 2  # the session read again, with the weights; the save
    fresh, team = runtime.team.kept()
    assert fresh and team is not None and team.lessons == 7


def test_a_session_saved_without_a_token_is_saved_again(
    app: App, redis_client: RedisClient, workspace: str
) -> None:
    """A session hash with no token field (an older version's, or another writer's) is
    checked by its version alone, and the next turn saves on it (not a conflict forever)."""
    say(app.runtime(use_env=False), "what if we used postgres")
    key = WorkspaceKeys(workspace).session("s1")
    redis_client.hdel(key, "token")
    say(app.runtime(use_env=False), "with a replica")  # a process that keeps nothing yet
    session = SessionStore(redis_client, workspace).load("s1")
    assert session.interaction.turn_count == 2


class Contended(ReadsAlone):
    """The embedded classifier, with another process's turn landing during each reading
    (``then``: what happens after, e.g. breaking)."""

    name = "embedded"

    def __init__(self, other: Runtime, broken: bool = False) -> None:
        self.other, self.broken, self.readings = other, broken, 0

    def classify(
        self, text: str, topic: str | None = None, context: TurnContext | None = None
    ) -> TurnInterpretation:
        self.readings += 1
        say(self.other, f"bob's turn {self.readings}", BOB)
        if self.broken:
            raise RuntimeError("the classifier broke")
        return EmbeddedClassifier().classify(text, topic, context)


def test_a_turn_found_moved_again_and_again_is_read_twice_at_most(
    app: App, redis_client: RedisClient, workspace: str
) -> None:
    """Another process saves the session during every reading: the first save finds it
    moved, and what was said is then saved before it is read again, so the second reading's
    message is applied to what the save finds, not read a third time."""
    ann = app.runtime(use_env=False)
    say(ann, "what if we used postgres")
    contended = Contended(build_app(workspace, client=redis_client).runtime(use_env=False))
    ann.classifier = contended
    say(ann, "with a replica")
    assert contended.readings == 2
    session = SessionStore(redis_client, workspace).load("s1")
    assert session.interaction.turn_count == 4  # hers two, his two
    said = [line for line in transcript(redis_client, workspace, "s1") if line[0] != "assistant"]
    assert said == [
        ("user:ann", "what if we used postgres"),
        ("user:bob", "bob's turn 1"),
        ("user:ann", "with a replica"),
        ("user:bob", "bob's turn 2"),
    ]


def test_what_was_said_is_saved_when_its_reading_fails_after_someone_saved(
    app: App, redis_client: RedisClient, workspace: str
) -> None:
    """Bob's turn lands while Ann's is being read, then her reading fails: her words are
    saved on his session, not dropped with the save that found it moved."""
    ann = app.runtime(use_env=False)
    say(ann, "what if we used postgres")
    other = build_app(workspace, client=redis_client).runtime(use_env=False)
    ann.classifier = Contended(other, broken=True)
    with pytest.raises(RuntimeError, match="the classifier broke"):
        say(ann, "with a replica")
    session = SessionStore(redis_client, workspace).load("s1")
    assert session.interaction.turn_count == 3
    said = [line for line in transcript(redis_client, workspace, "s1") if line[0] != "assistant"]
    assert said[-2:] == [("user:bob", "bob's turn 1"), ("user:ann", "with a replica")]
