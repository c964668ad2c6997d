"""A turn's save before its answer travels while the answer is made (``runner.py``): the
responder is asked, and its message updated, before the send hears what the save came to;
the send hears it before the next save, before anything acts beyond the session (a model's
tool too) and before it answers. On the suite's one Redis server, through the wire the
runtime sends on (a cluster's client answers each save at once, as before).

What that must not lose or do twice: someone who saved first (the answer made meanwhile is
dropped, and what was said is read again on what they saved); a model's tool that would act
on a save someone beat; an answer lost on its way; a responder that fails."""

from __future__ import annotations

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
from core.runtime.runner import Runtime
from core.runtime.sessions import SessionStore
from core.state.actor import Actor
from tests.classifiers import Seen
from tests.factories import actor
from tests.model_script import kind, label, output, proposing
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
class Failing:
    """A responder whose model is down: every answer raises."""

    asked: list[str] = field(default_factory=list)

    def answer(self, turn: Turn, correlation_id: str, asker: Actor | None = None) -> Answer:
        self.asked.append(turn.user_input)
        raise RuntimeError("the model is down")


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


def modelled(model: openai.OpenAI) -> ChatModel:
    return ChatModel(model, "test-model", timeout_sec=5)


def steps(client: Redis, workspace: str, correlation_id: str) -> list[str]:
    app = build_app(workspace, client=client)
    return [s["event"] for s in collect(app, correlation_id)]


def test_the_answer_is_made_while_the_save_before_it_is_on_its_way(
    server_redis: Redis, workspace: str, openai_server: OpenAIServer
) -> None:
    """Through a link that holds the server's replies from the model's reading on: the save
    of that reading reaches Redis and the model is asked for the answer while the save's
    reply is still held (a send that waited for it would never ask)."""
    with RedisProxy(server_redis) as proxy:
        client = proxy.client(decode_responses=True, socket_timeout=10)
        landed: list[int] = []

        def answer(request: dict[str, Any]) -> Reply:
            if kind(request) == "classify":
                proxy.hold_replies()  # (what the reading's save hears is held from now)
                return label("brainstorm")
            store = SessionStore(server_redis, workspace)
            landed.append(wait_for(lambda: store.load("s1").version >= 2, "the reading's save"))
            proxy.release_replies()
            return output("A rooftop launch party?", "Rooftop launch party")

        openai_server.answer_with = answer
        model = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
        runtime = build_app(workspace, client=client).runtime(
            ChatModel(model, "test-model", timeout_sec=5)
        )
        view = say(runtime, "what if the launch party was a rooftop thing")
        client.close()
    assert landed == [True] and view.candidate is not None
    session = SessionStore(server_redis, workspace).load("s1")
    assert session.version == 3 and session.interaction.turn_count == 1
    assert transcript(server_redis, workspace, "s1") == [
        ("user:alice", "what if the launch party was a rooftop thing"),
        ("assistant", view.text),
    ]


def test_a_save_on_its_way_that_someone_beat_drops_the_answer_made_meanwhile(
    plain: Redis, server_redis: Redis, workspace: str
) -> None:
    """Bob's turn lands while Alice's is read: her save (what she said, with its reading)
    is sent, her answer made, and then she hears that he saved first. Her answer is
    dropped (no view, no transcript line, no beats: only its trace row stays, as every
    message's does); what she said is applied to his session, read again in the context his
    turn made, answered again and saved. Nothing lost, nothing written twice."""
    alice = build_app(workspace, client=plain).runtime(use_env=False)
    bob = build_app(workspace, client=server_redis).runtime(use_env=False)
    say(alice, "what if we warmed up first", session="warm-up")
    bobs: list[View] = []
    watched = Interloping(interloper=lambda: bobs.append(say(bob, "what about mysql", BOB)))
    alice.classifier = watched
    mine = say(alice, "what if we used postgres")
    [his] = bobs
    session = SessionStore(server_redis, workspace).load("s1")
    assert session.interaction.turn_count == 2
    assert transcript(server_redis, workspace, "s1") == [
        ("user:bob", "what about mysql"),
        ("assistant", his.text),
        ("user:alice", "what if we used postgres"),
        ("assistant", mine.text),
    ]
    first, again = watched.contexts
    assert first is not None and again is not None
    assert first.recent == () and [t.who for t in again.recent] == ["user:bob"]
    assert steps(server_redis, workspace, mine.correlation_id) == [
        "user_said",
        "classified",
        "assistant_replied",  # (the answer dropped)
        "classified",
        "assistant_replied",
        "beats",
    ]


def test_a_models_tool_acts_only_once_the_save_it_follows_is_heard_of(
    plain: Redis, server_redis: Redis, workspace: str, openai_server: OpenAIServer
) -> None:
    """The model's tool proposes a change while the save of the reading it answers is on
    its way, and Bob saved first: the proposal is not made (the save is heard of first,
    found beaten, and the answer dropped). The reading is applied to his session and saved
    before the model is asked again: one proposal, made once."""
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
    # the reading; the answer's first call, its tool dropped; the answer's call again, its
    # tool; its last call
    assert [kind(r) for r in openai_server.requests] == [
        "classify",
        "generate",
        "generate",
        "generate",
    ]
    [his] = bobs
    assert transcript(server_redis, workspace, "s1") == [
        ("user:alice", "let's switch the scene to BRB"),  # (saved alone: a model reads it)
        ("user:bob", "what about mysql"),
        ("assistant", his.text),
        ("assistant", mine.text),
    ]
    assert SessionStore(server_redis, workspace).load("s1").interaction.turn_count == 2


def test_an_answer_lost_on_its_way_is_heard_by_making_the_save_again(
    server_redis: Redis, workspace: str, openai_server: OpenAIServer
) -> None:
    """The link is cut once the reading's save has landed, its reply held: the send hears
    nothing, makes the save again with its token, and is answered as the save was made.
    Nothing written twice."""
    with RedisProxy(server_redis) as proxy:
        client = proxy.client(decode_responses=True)

        def answer(request: dict[str, Any]) -> Reply:
            if kind(request) == "classify":
                proxy.hold_replies()
                return label("brainstorm")
            store = SessionStore(server_redis, workspace)
            wait_for(lambda: store.load("s1").version >= 2, "the reading's save")
            proxy.cut()  # (its reply never reaches the send)
            proxy.release_replies()
            proxy.restore()
            return output("A rooftop launch party?", "Rooftop launch party")

        openai_server.answer_with = answer
        model = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
        runtime = build_app(workspace, client=client).runtime(
            ChatModel(model, "test-model", timeout_sec=5)
        )
        view = say(runtime, "what if the launch party was a rooftop thing")
        client.close()
    session = SessionStore(server_redis, workspace).load("s1")
    assert session.version == 3 and session.interaction.turn_count == 1
    assert transcript(server_redis, workspace, "s1") == [
        ("user:alice", "what if the launch party was a rooftop thing"),
        ("assistant", view.text),
    ]
    assert steps(server_redis, workspace, view.correlation_id) == [
        "user_said",
        "llm.call",
        "classified",
        "llm.call",
        "assistant_replied",
        "beats",
    ]


@pytest.mark.parametrize("raced", [False, True], ids=["alone", "after someone saved"])
def test_a_responder_that_fails_leaves_what_was_said_on_record(
    plain: Redis, server_redis: Redis, workspace: str, raced: bool
) -> None:
    """The responder fails while the save of what Alice said is on its way: the send
    raises its error, and what she said is on record, with its reading; when Bob saved
    first, on his session: her words applied to it again, not the reading made before his
    turn landed (as when a reading fails: the words stay, and the next turn reads on)."""
    alice = build_app(workspace, client=plain).runtime(use_env=False)
    bob = build_app(workspace, client=server_redis).runtime(use_env=False)
    say(alice, "what if we warmed up first", session="warm-up")
    if raced:
        alice.classifier = Interloping(interloper=lambda: say(bob, "what about mysql", BOB))
    alice.responder = failing = Failing()
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
