"""A turn is read in its context (issue 42): the runtime hands the classifier what the session
knows at that turn (the last turns' acts, writers and questions, the idea on the table, who
asked for it and how long ago, what the turn repeats of them), as typed, bounded features,
never the earlier messages' words. A scratch session (``deliberate classify``'s ``before``)
builds that context exactly as the bot does: the same messages through a live runtime on
Redis and through a scratch session in memory give the classifier the same contexts."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.app import App
from core.deliberation.messages import UserSaid
from core.deliberation.recent import MAX_RECENT, TurnContext, sketch
from core.perception.in_context import context_features, in_context
from core.runtime.scratch import ScratchSession
from core.state.actor import Actor
from tests.classifiers import Seen

ANN, BOB, CAROL = (Actor.parse(f"user:{n}") for n in ("ann", "bob", "carol"))
TALK = [
    (ANN, "We need a database for billing. Ideas?"),
    (BOB, "lets go with postgres and a replica"),
    (CAROL, "why redis?"),
    (ANN, "I also picked Postgres"),
    (BOB, "yes"),
    (CAROL, "ok thanks"),
    (ANN, "and also a nightly backup"),
    (BOB, "same"),
]


def live(app: App, session: str, talk: list[tuple[Actor, str]]) -> list[TurnContext | None]:
    """The contexts the bot's runtime classifies ``talk`` with (a session on Redis)."""
    runtime = app.runtime(use_env=False)
    seen = Seen()
    runtime.classifier = seen
    for who, text in talk:
        runtime.send(session, UserSaid(text=text, actor=who))
    return seen.contexts


def scratch(app: App, talk: list[tuple[Actor, str]]) -> list[TurnContext | None]:
    seen = Seen()
    session = ScratchSession(app.runtime(use_env=False).loop.settings, seen)
    for who, text in talk:
        session.say(text, who)
    return seen.contexts


def test_the_bot_and_a_scratch_session_read_each_turn_in_the_same_context(app: App) -> None:
    bot, alone = live(app, "ctx-same", TALK), scratch(app, TALK)
    assert bot == alone
    assert [c is not None for c in bot] == [True] * len(TALK)
    last = bot[-1]
    assert last is not None and last.writer == "user:bob"
    assert [t.who for t in last.recent] == [
        f"user:{n}" for n in ("carol", "ann", "bob", "carol", "ann")
    ]
    assert last.on_table is not None and last.on_table.by == "user:bob"  # he asked for it


def test_the_idea_on_the_table_and_what_a_turn_repeats_of_it(app: App) -> None:
    contexts = scratch(app, TALK[:4])
    postgres = contexts[3]  # Ann, as "postgres and a replica" is on the table
    assert postgres is not None and postgres.on_table is not None
    assert postgres.on_table.turns_since == 1  # "why redis?" was said since
    assert contexts[2] is not None and contexts[2].on_table is not None
    assert contexts[2].on_table.turns_since == 0  # the turn right after the one it answered
    seen = in_context("I also picked Postgres", postgres)
    assert seen.repeats_table == 1.0 and seen.table_by_writer is False
    assert [e.act for e in seen.earlier][-1] == "question"  # "why redis?"
    assert "ctx:repeats-table" in context_features("I also picked Postgres", postgres)
    assert in_context("what about mysql", postgres).repeats_table == 0.0


WORDS = st.sampled_from(
    [
        *("postgres", "replica", "kafka", "friday", "standup", "migration", "contractor"),
        *("budget", "venue", "release", "database", "billing", "backup", "snapshot"),
        *("cluster", "failover", "rollout", "dashboard"),
    ]
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(st.lists(WORDS, min_size=1, max_size=6).map(" ".join), min_size=1, max_size=12),
    punct=st.sampled_from(["", "?", "!"]),
)
def test_a_session_keeps_a_few_turns_as_features_never_their_words(
    app: App, texts: list[str], punct: str
) -> None:
    texts = [t + punct for t in texts]
    session = f"ctx-words-{uuid.uuid4().hex}"  # (hypothesis may try one example twice)
    runtime = app.runtime(use_env=False)
    for n, text in enumerate(texts):
        runtime.send(session, UserSaid(text=text, actor=Actor.parse(f"user:p{n % 3}")))
    state = runtime.sessions.load(session).interaction
    assert len(state.recent) == min(len(texts), MAX_RECENT)
    kept = " ".join(  # every string a turn keeps: its act, its writer, its sketch
        str(v) for t in state.recent for v in t.model_dump(mode="json").values()
    )
    for text in texts:  # none of its words, nor their first five letters
        assert not [w for w in text.rstrip(punct).split() if w[:5] in kept], (text, kept)
    assert [t.words for t in state.recent] == [sketch(t) for t in texts[-MAX_RECENT:]]
    assert [t.asked for t in state.recent] == [punct == "?"] * len(state.recent)


def test_an_actor_with_the_longest_id_is_read_in_context(app: App) -> None:
    """An id of 128 characters (the most an actor has) under the longest kind."""
    longest = Actor.parse("automation:" + "x" * 128)
    contexts = scratch(app, [(longest, "how about postgres?"), (longest, "yes")])
    last = contexts[-1]
    assert last is not None and last.writer == str(longest)
    assert last.recent[0].who == str(longest)


def test_going_back_puts_the_earlier_idea_on_the_table_by_whoever_asked_now(app: App) -> None:
    talk = [
        (ANN, "what about postgres with a replica"),
        (BOB, "or maybe mysql on rds"),
        (CAROL, "go back to the previous one"),
        (ANN, "yes"),
    ]
    contexts = scratch(app, talk)
    back = contexts[-1]
    assert back is not None and back.on_table is not None
    assert (back.on_table.by, back.on_table.turns_since) == ("user:carol", 0)
    assert in_context("postgres replica", back).repeats_table == 1.0
