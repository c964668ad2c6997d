"""What a turn read again after another person's landed first must show: both turns in the
session, his before hers in the transcript, and her reading made twice, the second in the
context his turn made."""

from __future__ import annotations

from redis import Redis

from core.deliberation.view import View
from core.runtime.sessions import SessionStore
from tests.classifiers import Seen
from tests.reads import transcript

__all__ = ["read_again_after_his"]


def read_again_after_his(
    client: Redis, workspace: str, watched: Seen, his: tuple[str, View], mine: tuple[str, View]
) -> None:
    """``his`` and ``mine``: what Bob and Alice said in session "s1", and the views they got."""
    session = SessionStore(client, workspace).load("s1")
    assert session.interaction.turn_count == 2
    assert transcript(client, workspace, "s1") == [
        ("user:bob", his[0]),
        ("assistant", his[1].text),
        ("user:alice", mine[0]),
        ("assistant", mine[1].text),
    ]
    first, again = watched.contexts
    assert first is not None and again is not None
    assert first.recent == () and [t.who for t in again.recent] == ["user:bob"]
