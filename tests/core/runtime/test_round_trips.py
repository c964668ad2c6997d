"""A turn through ``Runtime.send`` takes one Redis round trip (two when a model answers), a
"Use this" click one, an Undo one (two of a change this process did not commit) (issues 33
and 45): the session as this process last
saved it, unread (read once when it keeps none: one more), then one script per save that
checks the version and writes the messages' trace rows, transcript lines and beat
evaluations (a message read by the embedded classifier is saved with its reading, before the
model call); a click's commit is the gateway's one script, sent with the click's save and
made only on it, and the save of what it came to after it, made only on that commit
(``core/runtime/on_save.py``). Counted on a real client of the suite's Redis (the cluster,
on a cluster run), never timed. And what folding the writes into the save must not lose: a
session another writer saved between two messages of one send, a save whose answer was lost,
the streams' caps and times to live."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import openai
import pytest
from redis import Redis

from bot.app import App, build_app
from bot.reports.trace import collect
from core.deliberation.actions import ActionType
from core.deliberation.messages import ActionClicked, UserSaid
from core.deliberation.view import View
from core.llm.chat import ChatModel
from core.redis.client import RedisClient, resend
from core.runtime.events import Event, OutcomeEvent
from core.runtime.made_here import MadeHere
from core.runtime.runner import Runtime
from core.runtime.sessions import SAVE_LUA, SessionStore
from core.runtime.team_weights import TeamStore
from core.runtime.transcripts import Transcripts
from core.state.keys import WorkspaceKeys
from core.state.scripts import COMMIT_LUA, UNDO_LOOKUP_LUA, LuaScript
from tests.classifiers import Seen
from tests.conftest import write_config
from tests.core.runtime.races import read_again_after_his
from tests.factories import actor, clicked
from tests.model_script import kind, label, output
from tests.openai_server import OpenAIServer, Reply
from tests.reads import transcript
from tests.responders import AsAModel
from tests.round_trips import Trips, counting_copy
from tests.servers.tcp_proxy import RedisProxy

MOST = 3  # round trips of a click, and of a turn whose session this process keeps none of
# of a click whose commit's outcome is known ahead ("Use this": the decision's next version):
# its save, its commit made on that save and the save of what it came to, made on the commit
COMMITTING = 1
COMMITTED_AFTER = 2  # of one whose commit expects no version: what it came to saved after it
# of an Undo of a change this process committed: the click's save with the revert's commit
# made on it and the save of what that came to
UNDOING = 1
# of one of a change it did not: its lookup first, sent as the click comes (its answer read
# once the click is updated), then the same
LOOKING_UP = 2
ALICE, BOB = actor("user:alice"), actor("user:bob")
TURNS = [
    "what if we used postgres for the orders service",  # a first idea
    "make it postgres 16 with pgbouncer in front",  # a refinement
    "how many connections would that take?",  # a question
    "no, not that",  # dissent: the candidate set aside
    "go back to the previous one",  # the earlier candidate again, no model call
    "also, the office plants need watering",  # a tangent
]


@pytest.fixture
def counted(redis_client: RedisClient, workspace: str) -> Iterator[tuple[App, Trips]]:
    """The app on a counting copy of the suite's client, its scripts loaded (a server that
    never ran one answers NOSCRIPT once) and, on a cluster, its slot map read."""
    yield from counting_app(redis_client, workspace, None)


@pytest.fixture
def unlearning(
    redis_client: RedisClient, workspace: str, tmp_path: Path
) -> Iterator[tuple[App, Trips]]:
    """``counted``, its workspace learning nothing of clicks: no lesson goes before a
    click's commit, and no read of the team's weights (a second after the last one) before a
    click, whatever the time between the turn and the click."""
    config = write_config(tmp_path, "perception:\n  adapt: false\n")
    yield from counting_app(redis_client, workspace, config)


def counting_app(
    redis_client: RedisClient, workspace: str, config: Path | None
) -> Iterator[tuple[App, Trips]]:
    client, trips = counting_copy(redis_client)
    app = build_app(workspace, config, client=client)
    runtime = app.runtime(use_env=False)
    view = say(runtime, "what if we warmed up first", session="warm-up")
    assert committed(press(runtime, view, ActionType.CONFIRM_CURRENT, "warm-up", "warm-up"))
    say(runtime, "and a read again", session="warm-up-2")  # (a second connection, for a read)
    yield app, trips
    client.close()


def views(events: list[Event]) -> list[View]:
    return [e for e in events if isinstance(e, View)]


def committed(events: list[Event]) -> bool:
    return [e.outcome for e in events if isinstance(e, OutcomeEvent)] == ["committed"]


def say(runtime: Runtime, text: str, who: Any = ALICE, session: str = "s1") -> View:
    [view] = views(runtime.send(session, UserSaid(text=text, actor=who)))
    return view


def click(view: View, action: str, click_id: str) -> ActionClicked:
    return clicked(view, action, click_id, ALICE)


def press(
    runtime: Runtime, view: View, action: str, click_id: str, session: str = "s1"
) -> list[Event]:
    return runtime.send(session, click(view, action, click_id))


def test_each_turn_of_a_conversation_takes_one_round_trip_once_its_session_is_kept(
    counted: tuple[App, Trips],
) -> None:
    app, trips = counted
    runtime = app.runtime(use_env=False)
    spent = []
    for text in TURNS:
        with trips.counting():
            say(runtime, text)
        spent.append(trips.count)
    # the first reads the session; then one save: what was said, how it was read and the
    # answer (both made in this process: they wait for it)
    assert spent == [2, 1, 1, 1, 1, 1], dict(zip(TURNS, spent, strict=True))
    session = SessionStore(app.redis, app.store.workspace).load("s1")
    assert session.interaction.turn_count == len(TURNS)


def test_a_use_this_click_takes_one_round_trip_and_commits_once(
    unlearning: tuple[App, Trips],
) -> None:
    app, trips = unlearning
    runtime = app.runtime(use_env=False)
    view = say(runtime, "what if we used postgres for the orders service")
    with trips.counting():
        done = press(runtime, view, ActionType.CONFIRM_CURRENT, "c1")
    # save the click as on its way, the gateway's commit made on that save, and what it
    # came to, made on that commit
    assert trips.count == COMMITTING and committed(done)
    [outcome] = [e for e in done if isinstance(e, OutcomeEvent)]
    with trips.counting():
        again = press(runtime, view, ActionType.CONFIRM_CURRENT, "c1")  # delivered twice
    assert trips.count <= MOST and not committed(again)
    assert outcome.key is not None and app.store.version(outcome.key) == 1


def test_a_use_this_click_that_teaches_takes_three_round_trips_more(
    counted: tuple[App, Trips],
) -> None:
    """After "roger that", read as a tangent, "Use this" teaches the workspace's own weights
    (``core/perception/team.py``): a WATCH, one script that reads the table and the clock,
    and one transaction that writes it and its line on the trace."""
    app, trips = counted
    runtime = app.runtime(use_env=False)
    view = say(runtime, "what if we used postgres for the orders service")
    say(runtime, "roger that", BOB)
    with trips.counting():
        done = press(runtime, view, ActionType.CONFIRM_CURRENT, "c1")
    assert committed(done) and trips.count <= MOST + 3
    team = TeamStore(app.redis, app.store.workspace).load()
    assert team is not None and team.lessons == 1  # it taught


@pytest.mark.parametrize(
    ("action", "most"),
    [
        (ActionType.ALTERNATIVE_CURRENT, MOST),  # an answer: saved before the model is asked
        (ActionType.EXPAND_CURRENT, MOST),
        (ActionType.ADD_CURRENT_TO_ARTIFACT, COMMITTED_AFTER),  # made on the click's save
        (ActionType.DERIVE_ENTITY_FROM_CURRENT, COMMITTED_AFTER),
    ],
)
def test_the_other_clicks_on_a_candidate_take_at_most_three_round_trips(
    unlearning: tuple[App, Trips], action: str, most: int
) -> None:
    app, trips = unlearning
    runtime = app.runtime(use_env=False)
    view = say(runtime, "what if we used postgres for the orders service")
    with trips.counting():
        runtime.send("s1", click(view, action, "k1"))
    assert trips.count <= most
    with trips.counting():  # the button is stale now, or done: said without a commit
        runtime.send("s1", click(view, action, "k2"))
    assert trips.count <= MOST


def test_a_turn_keeps_its_streams_capped_and_timed(counted: tuple[App, Trips]) -> None:
    app, _ = counted
    runtime = app.runtime(use_env=False)
    view = say(runtime, "what if we used postgres for the orders service")
    keys = WorkspaceKeys(app.store.workspace)
    ttl_sec = app.config.sessions.ttl_sec
    assert 0 < app.redis.ttl(keys.transcript("s1")) <= ttl_sec
    assert 0 < app.redis.pttl(keys.session("s1")) <= ttl_sec * 1000
    assert app.redis.ttl(keys.trace) == -1 and app.redis.ttl(keys.beat_history) == -1
    assert transcript(app.redis, app.store.workspace, "s1") == [
        ("user:alice", "what if we used postgres for the orders service"),
        ("assistant", view.text),
    ]
    steps = [s["event"] for s in collect(app, view.correlation_id)]
    assert steps == ["user_said", "classified", "assistant_replied", "beats"]


def answer(request: dict[str, Any]) -> Reply:
    if kind(request) == "classify":
        return label("brainstorm")
    return output("A rooftop launch party?", "Rooftop launch party", summary="launch party")


def test_a_turn_with_a_model_saves_its_calls_audits_with_the_session(
    counted: tuple[App, Trips], openai_server: OpenAIServer
) -> None:
    """Each model call's audit row goes to the trace with the next save (where its message
    follows it), not in a round trip of its own. A model reads the turn: what was said is
    saved before that call, as before the answer's."""
    app, trips = counted
    openai_server.answer_with = answer
    model = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    runtime = app.runtime(ChatModel(model, "test-model", timeout_sec=5))
    with trips.counting():
        view = say(runtime, "what if the launch party was a rooftop thing")
    # the read, then the saves of what was said, of how the model read it, of the answer
    assert trips.count == 4 and view.candidate is not None
    assert len(openai_server.requests) == 2
    with trips.counting():
        say(runtime, "with a string quartet")
    assert trips.count == 3  # the session kept: no read
    steps = [(s["event"], s["data"].get("purpose")) for s in collect(app, view.correlation_id)]
    assert steps == [
        ("user_said", None),
        ("llm.call", "classify"),
        ("classified", None),
        ("llm.call", "generate"),
        ("assistant_replied", None),
        ("beats", None),
    ]


class Interleaved(Redis):
    """A real client that, once given an ``interloper``, runs it just before the ``at``-th
    session save it sends from then on (another person's turn lands between two messages
    of this client's send)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.save_sha = LuaScript(self, SAVE_LUA).sha
        self.saves = self.at = 0
        self.interloper: Callable[[], object] | None = None

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if self.interloper is not None and args[:2] == ("EVALSHA", self.save_sha):
            self.saves += 1
            if self.saves == self.at:
                interloper, self.interloper = self.interloper, None
                interloper()
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


class Race(NamedTuple):
    """Alice's runtime on a client whose ``at``-th session save from now on lets Bob's turn
    land first (his views in ``bobs``; his runtime on another client), her warm-up turn in
    another session done; her round trips counted in ``trips``."""

    alice: Runtime
    interleaved: Interleaved
    trips: Trips
    bobs: list[View]


@pytest.fixture
def race(server_redis: Redis, workspace: str) -> Iterator[Race]:
    counting, trips = counting_copy(server_redis)
    assert isinstance(counting, Redis)
    interleaved = Interleaved(connection_pool=counting.connection_pool)
    alice = build_app(workspace, client=interleaved).runtime(use_env=False)
    bob = build_app(workspace, client=server_redis).runtime(use_env=False)
    say(alice, "what if we warmed up first", session="warm-up")
    bobs: list[View] = []
    interleaved.interloper = lambda: bobs.append(say(bob, "what about mysql instead", BOB))
    yield Race(alice, interleaved, trips, bobs)
    counting.close()


def test_a_session_saved_by_someone_else_between_two_messages_loses_nothing(
    server_redis: Redis, workspace: str, race: Race
) -> None:
    """Bob's turn lands while a model makes Alice's answer (what she said is saved before
    it is asked): her answer's save finds his session and her message is applied to it
    again (one round trip more, no read), nothing lost, nothing written twice."""
    race.alice.responder = AsAModel()
    race.interleaved.at = 2  # her turn's second save: the answer's
    with race.trips.counting():
        mine = say(race.alice, "what if we used postgres")
    [his] = race.bobs  # (his turn ran on another client: not counted)
    assert race.trips.count == MOST + 1
    session = SessionStore(server_redis, workspace).load("s1")
    assert session.interaction.turn_count == 2
    assert transcript(server_redis, workspace, "s1") == [
        ("user:alice", "what if we used postgres"),
        ("user:bob", "what about mysql instead"),
        ("assistant", his.text),
        ("assistant", mine.text),
    ]
    app = build_app(workspace, client=server_redis)
    steps = [s["event"] for s in collect(app, mine.correlation_id)]
    assert steps == ["user_said", "classified", "assistant_replied", "beats"]


def test_a_turn_found_moved_at_its_first_save_is_read_again_on_what_was_found(
    server_redis: Redis, workspace: str, race: Race
) -> None:
    """Bob's turn lands while Alice's is being read (her words, their reading and her
    answer wait for one save): her save finds his session, so what she said is applied to
    it and read again, in the context his turn made; nothing lost, nothing written twice.
    The reading and the answer made before his turn landed stay on the trace, the second
    ones after them; the first answer is dropped (no transcript line, no beats, no view)."""
    watched = Seen()
    race.alice.classifier = watched
    race.interleaved.at = 1  # her turn's save: what she said, how it was read, the answer
    with race.trips.counting():
        mine = say(race.alice, "what if we used postgres")
    [his] = race.bobs
    # the read, the save that found his, what she said (saved alone now), how it was read
    # again, the answer's
    assert race.trips.count == 5
    theirs = (("what about mysql instead", his), ("what if we used postgres", mine))
    read_again_after_his(server_redis, workspace, watched, *theirs)
    app = build_app(workspace, client=server_redis)
    steps = [s["event"] for s in collect(app, mine.correlation_id)]
    assert steps == [
        "user_said",
        "classified",
        "assistant_replied",
        "classified",
        "assistant_replied",
        "beats",
    ]


def test_a_save_whose_answer_was_lost_is_sent_again_and_writes_nothing_twice(
    server_redis: Redis, workspace: str, proxy: RedisProxy
) -> None:
    """The runtime sends a save again, with its token, when Redis cut it off: the save had
    landed, so the second run answers as the first did, and its rows are not written again."""
    client = proxy.client()
    sessions = SessionStore(client, workspace)
    lines = Transcripts(client, workspace, ttl_sec=600)
    read = sessions.load("s1")  # connected, the script loaded: the next command is the save
    assert sessions.store(read, read, uuid.uuid4().hex).saved
    changed = read.with_interaction(read.interaction.model_copy(update={"turn_count": 1}))
    row = lines.line("s1", "user:alice", "what if we used postgres", "corr-1")
    save = partial(sessions.store, read, changed, uuid.uuid4().hex, [row], 0)
    key = WorkspaceKeys(workspace).session("s1")
    stored = proxy.answer_lost(  # its answer never reaches the runtime
        partial(resend, save, client, 30),
        lambda: server_redis.hget(key, "version") == "1",
        "the save",
    )
    assert stored == (True, changed.model_copy(update={"version": 1}))
    assert transcript(server_redis, workspace, "s1") == [("user:alice", "what if we used postgres")]
    assert server_redis.hget(key, "version") == "1"


def test_a_save_of_a_session_that_moved_writes_only_the_rows_it_must(
    redis_client: RedisClient, workspace: str
) -> None:
    """Someone saved first: the message's trace row is written (the trace keeps every
    message), its transcript line is not (the update made again on the session found asks
    for it again), and the session found is the answer, changed or not."""
    app = build_app(workspace, client=redis_client)
    sessions = SessionStore(redis_client, workspace)
    lines = Transcripts(redis_client, workspace, ttl_sec=600)
    read = sessions.load("s1")
    theirs = sessions.save(
        read.with_interaction(read.interaction.model_copy(update={"topic": "db"}))
    )
    assert theirs is not None
    rows = [
        app.trace.row("corr-1", "s1", "user_said", {"text": "hi"}),
        lines.line("s1", "user:alice", "hi", "corr-1"),
    ]
    assert sessions.store(read, read, "t1", rows, 1) == (False, theirs)
    changed = read.with_interaction(read.interaction.model_copy(update={"turn_count": 1}))
    assert sessions.store(read, changed, "t2", rows[1:], 0) == (False, theirs)
    assert transcript(redis_client, workspace, "s1") == []
    assert [s["event"] for s in app.trace.for_correlation("corr-1")] == ["user_said"]
    assert sessions.load("s1") == theirs


@pytest.mark.parametrize("made_here", [True, False], ids=["made here", "made elsewhere"])
def test_an_undo_click_takes_one_round_trip_or_two(
    counted: tuple[App, Trips], made_here: bool
) -> None:
    """Of a change this process committed (``made_here``: its commit said what the key held
    before), the revert is checked as the click comes, and committed on the click's save,
    with the save of what it came to, foreseen and made on the commit: one round trip.
    Of one it does not keep, what it undoes (the key's version, the clock: one script) is
    asked as the click comes, its answer read once the click is updated: two (it took 7:
    the log scanned for the record, then the clock and the version asked apart; then 5,
    the lookup a round trip of its own; then 4, the session read first; then 3, the save of
    what it came to after the commit; then 2, the lookup in the save's pipeline and the
    revert after it)."""
    app, trips = counted
    runtime = app.runtime(use_env=False)
    # the first loads its script (NOSCRIPT, then EVAL), on a key of its own
    for session, text in (
        ("warm-up-undo", "what if we used redis for the session cache"),
        ("s1", "what if we used postgres for the orders service"),
    ):
        view = say(runtime, text, session=session)
        done = press(runtime, view, ActionType.CONFIRM_CURRENT, f"c-{session}", session)
        [after] = views(done)
        if not made_here:
            runtime.made = MadeHere()  # (as another process: it kept the session, not this)
        with trips.counting():
            undone = press(runtime, after, ActionType.REVERT_MUTATION, f"u-{session}", session)
        assert [e.outcome for e in undone if isinstance(e, OutcomeEvent)] == ["committed"]
    assert trips.count == (UNDOING if made_here else LOOKING_UP), trips.count
    # the lookup, when it is asked, went first, alone; the revert's commit with the save
    said = b"".join(trips.said)
    lookup, save = (
        LuaScript(app.store.redis, UNDO_LOOKUP_LUA).sha.encode(),
        LuaScript(app.store.redis, SAVE_LUA).sha.encode(),
    )
    commit = LuaScript(app.store.redis, COMMIT_LUA).sha.encode()
    assert said.count(lookup) == (0 if made_here else 1)
    assert said.index(save) < said.index(commit)
    if not made_here:
        assert said.index(lookup) < said.index(save)
    assert app.store.get(done_key(done)) is None  # (reverted: the key absent again)


def done_key(events: list[Event]) -> str:
    [outcome] = [e for e in events if isinstance(e, OutcomeEvent)]
    assert outcome.key is not None
    return outcome.key
