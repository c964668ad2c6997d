"""A save sent again with its token (its answer lost) answers as its first run did and
writes nothing twice (``session_cas.lua``): also after others saved since, as long as its
token is among the session's last saves' (16 kept, the oldest dropped whole), and also for a
save that changed nothing but wrote rows. On the suite's Redis (a cluster on a cluster run)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.deliberation.session import Session
from core.redis.client import RedisClient
from core.runtime.sessions import SessionStore, Stored
from core.runtime.transcripts import Transcripts
from core.state.keys import WorkspaceKeys
from tests.reads import transcript

KEPT = 16  # the tokens of the last saves the session keeps


def token() -> str:
    return os.urandom(16).hex()


def turned(session: Session, count: int) -> Session:
    """``session`` with one more turn counted (a change to save)."""
    interaction = session.interaction.model_copy(update={"turn_count": count})
    return session.with_interaction(interaction)


def saved_by_others(store: SessionStore, session: Session, times: int) -> Session:
    for n in range(times):
        stored = store.store(session, turned(session, 100 + n), token())
        assert stored.saved
        session = stored.session
    return session


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(others=st.integers(min_value=0, max_value=KEPT + 3))
def test_a_save_sent_again_after_others_saved_is_known_while_its_token_is_kept(
    redis_client: RedisClient, workspace: str, others: int
) -> None:
    session_id = f"s-{token()[:8]}"
    store = SessionStore(redis_client, workspace)
    lines = Transcripts(redis_client, workspace, 3600)
    read = store.read_kept(session_id)
    mine, line = token(), lines.line(session_id, "user:ann", "what if we used postgres", "c1")
    first = store.store(read, turned(read, 1), mine, [line])
    assert first.saved
    latest = saved_by_others(SessionStore(redis_client, workspace), first.session, others)
    again: Stored = store.store(read, turned(read, 1), mine, [line])
    # known (the answer its first run gave) while its token is among the last 16 saves';
    # past that, it reads as beaten: what the session is now, nothing written
    assert again.saved is (others < KEPT)
    assert again.session == (first.session if again.saved else latest)
    now = SessionStore(redis_client, workspace).load(session_id)
    assert now == latest and now.version == 1 + others
    assert transcript(redis_client, workspace, session_id) == [
        ("user:ann", "what if we used postgres")
    ]
    saves = str(redis_client.hget(WorkspaceKeys(workspace).session(session_id), "saves"))
    assert len(saves.split(" ")) == min(1 + others, KEPT)


def test_a_save_that_changed_nothing_sent_again_writes_its_rows_once(
    redis_client: RedisClient, workspace: str
) -> None:
    store = SessionStore(redis_client, workspace)
    lines = Transcripts(redis_client, workspace, 3600)
    read = store.read_kept("s1")
    session = store.store(read, turned(read, 1), token()).session
    line = lines.line("s1", "assistant", "here is where we are", "c2")
    unchanged = token()
    for _ in range(2):  # (the second: its answer lost, sent again)
        stored = store.store(session, session, unchanged, [line])
        assert stored.saved and stored.session is session
    assert transcript(redis_client, workspace, "s1") == [("assistant", "here is where we are")]


def test_a_check_of_a_session_that_does_not_exist_creates_nothing(
    redis_client: RedisClient, workspace: str
) -> None:
    """A save that changed nothing, of a session never saved, writes its rows and keeps no
    token: no hash is made for it (it would live without a time to live)."""
    store = SessionStore(redis_client, workspace)
    lines = Transcripts(redis_client, workspace, 3600)
    read = store.read_kept("s1")
    line = lines.line("s1", "assistant", "hello", "c3")
    assert store.store(read, read, token(), [line]).saved
    assert not redis_client.exists(WorkspaceKeys(workspace).session("s1"))


def test_a_token_that_joins_two_kept_tokens_is_not_taken_for_either(
    redis_client: RedisClient, workspace: str
) -> None:
    """The kept tokens are space-separated: a token with a space in it, two of them joined,
    is nobody's save (it is checked as a new one: here, beaten)."""
    store = SessionStore(redis_client, workspace)
    read = store.read_kept("s1")
    first, second = token(), token()
    session = store.store(read, turned(read, 1), first).session
    store.store(session, turned(session, 2), second)
    joined = store.store(read, turned(read, 9), f"{second} {first}")
    assert not joined.saved and joined.session.interaction.turn_count == 2
