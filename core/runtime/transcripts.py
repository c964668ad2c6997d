"""Transcripts: every turn of a session, kept for audit. Write-only: nothing here produces a
PromptFrame, and no model call (nor anything else in the product) reads it back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.state.keys import WorkspaceKeys

if TYPE_CHECKING:
    from core.redis_client import RedisClient

__all__ = ["Transcripts"]

MAX_LINES = 5000


class Transcripts:
    def __init__(self, client: RedisClient, workspace: str, ttl_sec: int) -> None:
        self.redis = client
        self.keys = WorkspaceKeys(workspace)
        self.ttl_sec = ttl_sec

    def append(self, session_id: str, speaker: str, text: str, correlation_id: str) -> None:
        key = self.keys.transcript(session_id)
        pipe = self.redis.pipeline(transaction=False)
        pipe.xadd(
            key,
            {"speaker": speaker, "text": text, "correlation_id": correlation_id},
            maxlen=MAX_LINES,
            approximate=True,
        )
        pipe.expire(key, self.ttl_sec)
        pipe.execute()
