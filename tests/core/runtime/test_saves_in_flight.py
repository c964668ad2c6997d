"""A turn whose reading and answer are made in this process waits for one save with them
(``runner.py``: each waits for the save of the message it comes back as); a send's last save
travels while its views are put out, and is heard of before the send answers. A model is
asked only once the save before it is heard of. On the suite's one Redis server, through the
wire the runtime sends on (a cluster's client answers each save at once, as does a pool
capped too low to keep a connection waiting).

What that must not lose or do twice: someone who saved first (the answer made before is
dropped, and what was said is read again on what they saved); a save's answer lost on its
way, also when someone saved after it; a responder that fails; a pool of one connection."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import openai
import pytest
from redis import ConnectionPool, Redis

from bot.app import build_app
from bot.reports.trace import collect
from core.deliberation.interpretation import TurnInterpretation
from core.deliberation.messages import UserSaid
from core.deliberation.recent import TurnContext
from core.deliberation.turn import Answer, Turn
from core.deliberation.view import View
from core.llm.chat import ChatModel
from core.llm.offline_responder import OfflineResponder
from core.runtime.runner import Runtime
from core.runtime.sessions import SessionStore
from core.state.actor import Actor
from tests.classifiers import Seen
from tests.core.runtime.races import read_again_after_his
from tests.factories import actor
from tests.model_script import kind, proposing
from tests.openai_server import OpenAIServer, Reply
from tests.polling import wait_for
from tests.reads import pending_proposals, transcript
from tests.servers.tcp_proxy import RedisProxy

ALICE, BOB = actor("user:alice"), actor("user:bob")


@dataclass
class Interloping(Seen):
    """The real embedded classifier; its first reading lets ``interloper`` run first
    (another person's turn lands while this one is read)."""

    interloper: Callable[[], object] | None = None

    def classify(
        self, text: str, topic: str | None = None, context: TurnContext | None = None
    ) -> TurnInterpretation:
        interloper, self.interloper = self.interloper, None
        if interloper is not None:
            interloper()
        return super().classify(text, topic, context)


@dataclass
class Meanwhile:
    """The offline responder (in this process), ``before`` run once as it is first asked
    (before the turn's save is sent); ``fails``: every answer raises instead."""

    before: Callable[[], object] | None = None
    fails: bool = False
    asked: list[str] = field(default_factory=list)
    inner: OfflineResponder = field(default_factory=OfflineResponder)
    in_process: bool = True

    def answer(self, turn: Turn, correlation_id: str, asker: Actor | None = None) -> Answer:
        self.asked.append(turn.user_input)
        before, self.before = self.before, None
        if before is not None:
            before()
        if self.fails:
            raise RuntimeError("the model is down")
        return self.inner.answer(turn, correlation_id, asker)


@pytest.fixture
def plain(server_redis: Redis) -> Iterator[Redis]:
    """A client of the suite's one server of its own (its scripts go on a wire)."""
    pool = server_redis.connection_pool
    client = Redis(
        connection_pool=ConnectionPool(
            connection_class=pool.connection_class, **pool.connection_kwargs
        )
    )
    yield client
    client.close()


def say(runtime: Runtime, text: str, who: Any = ALICE, session: str = "s1") -> View:
    events = runtime.send(session, UserSaid(text=text, actor=who))
    [view] = [e for e in events if isinstance(e, View)]
    return view


def steps(client: Redis, workspace: str, correlation_id: str) -> list[str]:
    app = build_app(workspace, client=client)
    return [s["event"] for s in collect(app, correlation_id)]


def holding(proxy: RedisProxy) -> Interloping:
    """A classifier that has the proxy hold the server's replies from its first reading on
    (what the turn's save hears is held)."""
    return Interloping(interloper=proxy.hold_replies)


PLAIN = ["user_said", "classified", "assistant_replied", "beats"]  # a turn's trace


def said_through_held_link(
    server_redis: Redis, workspace: str, meanwhile: Callable[[RedisProxy], object]
) -> tuple[View, Meanwhile]:
    """Alice says something through a link that holds the server's replies from the reading
    on; once her turn's save has landed in Redis, ``meanwhile(proxy)`` runs in another
    thread (and lets the replies through, one way or another) while her send waits."""
    store = SessionStore(server_redis, workspace)
    failed: list[BaseException] = []
    with RedisProxy(server_redis) as proxy:
        client = proxy.client(decode_responses=True, socket_timeout=10)
        alice = build_app(workspace, client=client).runtime(use_env=False)
        alice.classifier = holding(proxy)
        alice.responder = answering = Meanwhile()

        def landed() -> None:
            try:
                wait_for(lambda: store.load("s1").version == 1, "the turn's save")
                meanwhile(proxy)
            except BaseException as error:
                failed.append(error)
                proxy.release_replies()

        watcher = threading.Thread(target=landed)
        watcher.start()
        try:
            view = say(alice, "what if we used postgres")
        finally:
            watcher.join(timeout=60)
        client.close()
    if failed:
        raise failed[0]
    return view, answering


def test_a_turn_answered_in_this_process_is_saved_once_with_its_answer(
    plain: Redis, server_redis: Redis, workspace: str
) -> None:
    """The reading and the answer are made in this process: what was said waits for them,
    and the three go in one save (nothing of the turn is in Redis when the responder is
    asked)."""
    store = SessionStore(server_redis, workspace)
    alice = build_app(workspace, client=plain).runtime(use_env=False)
    versions: list[int] = []
    alice.responder = answering = Meanwhile(
        before=lambda: versions.append(store.load("s1").version)
    )
    view = say(alice, "what if we used postgres")
    assert versions == [0]
    assert answering.asked == ["what if we used postgres"] and view.candidate is not None
    session = store.load("s1")
    assert session.version == 1 and session.interaction.turn_count == 1
    assert transcript(server_redis, workspace, "s1") == [
        ("user:alice", "what if we used postgres"),
        ("assistant", view.text),
    ]
    assert steps(server_redis, workspace, view.correlation_id) == PLAIN


def test_the_turns_save_is_heard_of_through_a_link_that_held_its_reply(
    server_redis: Redis, workspace: str
) -> None:
    """Through a link that holds the server's replies from the reading on: the turn's save
    reaches Redis, its reply is let through late, and the send answers with what it saved."""
    view, answering = said_through_held_link(
        server_redis, workspace, lambda proxy: proxy.release_replies()
    )
    assert answering.asked == ["what if we used postgres"] and view.candidate is not None
    session = SessionStore(server_redis, workspace).load("s1")
    assert session.version == 1 and session.interaction.turn_count == 1
    assert steps(server_redis, workspace, view.correlation_id) == PLAIN


def test_a_save_that_someone_beat_drops_the_answer_made_before_it(
    plain: Redis, server_redis: Redis, workspace: str
) -> None:
    """Bob's turn lands while Alice's is read: her save (what she said, its reading and her
    answer) finds that he saved first. Her answer is dropped (no view, no transcript line,
    no beats: only its trace row stays, as every message's does); what she said is applied
    to his session, read again in the context his turn made, answered again and saved.
    Nothing lost, nothing written twice."""
    alice = build_app(workspace, client=plain).runtime(use_env=False)
    bob = build_app(workspace, client=server_redis).runtime(use_env=False)
    say(alice, "what if we warmed up first", session="warm-up")
    bobs: list[View] = []
    watched = Interloping(interloper=lambda: bobs.append(say(bob, "what about mysql", BOB)))
    alice.classifier = watched
    alice.responder = answering = Meanwhile()
    mine = say(alice, "what if we used postgres")
    [his] = bobs
    assert answering.asked == ["what if we used postgres"] * 2
    theirs = (("what about mysql", his), ("what if we used postgres", mine))
    read_again_after_his(server_redis, workspace, watched, *theirs)
    assert steps(server_redis, workspace, mine.correlation_id) == [
        "user_said",
        "classified",
        "assistant_replied",  # (the answer dropped)
        "classified",
        "assistant_replied",
        "beats",
    ]


@pytest.mark.parametrize("bob_saves", [False, True], ids=["alone", "then Bob saved"])
def test_a_save_whose_answer_was_lost_is_heard_by_making_it_again(
    server_redis: Redis, workspace: str, bob_saves: bool
) -> None:
    """The link is cut once the turn's save has landed, its reply held (and, in the second
    case, Bob saves after it first): the send hears nothing, makes the save again with its
    token, and is answered as the save was made, its token among the session's last saves'.
    What Alice said is applied once, with her answer."""
    bob = build_app(workspace, client=server_redis).runtime(use_env=False)
    bobs: list[View] = []

    def cut(proxy: RedisProxy) -> None:
        if bob_saves:
            bobs.append(say(bob, "what about mysql", BOB))
        proxy.cut()  # (its reply never reaches the send)
        proxy.release_replies()
        proxy.restore()

    mine, answering = said_through_held_link(server_redis, workspace, cut)
    assert answering.asked == ["what if we used postgres"]
    session = SessionStore(server_redis, workspace).load("s1")
    assert session.interaction.turn_count == (2 if bob_saves else 1)
    assert [t.who for t in session.interaction.recent] == (
        ["user:alice", "user:bob"] if bob_saves else ["user:alice"]
    )
    his = [("user:bob", "what about mysql"), ("assistant", bobs[0].text)] if bob_saves else []
    assert transcript(server_redis, workspace, "s1") == [
        ("user:alice", "what if we used postgres"),
        ("assistant", mine.text),
        *his,
    ]
    assert steps(server_redis, workspace, mine.correlation_id) == PLAIN


@pytest.mark.parametrize("raced", [False, True], ids=["alone", "after someone saved"])
def test_a_responder_that_fails_leaves_what_was_said_on_record(
    plain: Redis, server_redis: Redis, workspace: str, raced: bool
) -> None:
    """The responder fails while what Alice said and its reading wait for its answer: the
    send raises its error, and what she said is on record, with its reading; when Bob saved
    first, on his session: her words applied to it again, not the reading made before his
    turn landed (as when a reading fails: the words stay, and the next turn reads on)."""
    alice = build_app(workspace, client=plain).runtime(use_env=False)
    bob = build_app(workspace, client=server_redis).runtime(use_env=False)
    say(alice, "what if we warmed up first", session="warm-up")
    if raced:
        alice.classifier = Interloping(interloper=lambda: say(bob, "what about mysql", BOB))
    alice.responder = failing = Meanwhile(fails=True)
    with pytest.raises(RuntimeError, match="the model is down"):
        alice.send("s1", UserSaid(text="what if we used postgres", actor=ALICE))
    assert failing.asked == ["what if we used postgres"]
    lines = transcript(server_redis, workspace, "s1")
    assert lines[-1] == ("user:alice", "what if we used postgres")
    assert [who for who, _ in lines].count("user:alice") == 1
    session = SessionStore(server_redis, workspace).load("s1")
    assert session.interaction.turn_count == (2 if raced else 1)
    recent = session.interaction.recent
    assert [t.who for t in recent] == (["user:bob"] if raced else ["user:alice"])


def test_on_a_pool_of_one_connection_the_answer_finds_one_free(
    server_redis: Redis, workspace: str
) -> None:
    """A pool capped at one connection: no save holds it while the answer is made, so what
    the answer reads of the state (as a model's ``getState`` does) finds it free."""
    kwargs = dict(server_redis.connection_pool.connection_kwargs)
    client = Redis(connection_pool=ConnectionPool(max_connections=1, **kwargs))
    alice = build_app(workspace, client=client).runtime(use_env=False)
    read: list[object] = []
    alice.responder = Meanwhile(before=lambda: read.append(alice.gateway.store.get("x.y")))
    view = say(alice, "what if we used postgres")
    client.close()
    assert read == [None] and view.candidate is not None


def test_a_model_is_asked_once_the_save_before_it_is_heard_of(
    plain: Redis, server_redis: Redis, workspace: str, openai_server: OpenAIServer
) -> None:
    """A model answers over the network and its tools may act: the save before it is heard
    of first. Bob saves while the model reads Alice's turn: her reading's save finds his
    session, her reading is applied to it and saved, and only then is the model asked for
    the answer; its tool proposes once, the model is asked for the answer once."""
    bob = build_app(workspace, client=server_redis).runtime(use_env=False)
    propose = proposing("scene.name", "BRB")
    bobs: list[View] = []

    def answer(request: dict[str, Any]) -> Reply:
        if kind(request) == "classify" and not bobs:
            bobs.append(say(bob, "what about mysql", BOB))
        return propose(request)  # type: ignore[no-any-return]

    openai_server.answer_with = answer
    model = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    alice = build_app(workspace, client=plain).runtime(
        ChatModel(model, "test-model", timeout_sec=5)
    )
    mine = say(alice, "let's switch the scene to BRB")
    [proposal] = pending_proposals(server_redis, workspace)
    assert proposal.mutation.key == "scene.name" and proposal.mutation.value == "BRB"
    # the reading; the answer's call (its tool) and its last call
    assert [kind(r) for r in openai_server.requests] == ["classify", "generate", "generate"]
    [his] = bobs
    assert transcript(server_redis, workspace, "s1") == [
        ("user:alice", "let's switch the scene to BRB"),  # (saved alone: a model reads it)
        ("user:bob", "what about mysql"),
        ("assistant", his.text),
        ("assistant", mine.text),
    ]
    assert SessionStore(server_redis, workspace).load("s1").interaction.turn_count == 2
