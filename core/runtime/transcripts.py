"""Transcripts: every turn of a session, kept for audit. Write-only: nothing here produces a
PromptFrame, and no model call (nor anything else in the product) reads it back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.runtime.stream_appends import StreamAppend
from core.state.keys import WorkspaceKeys

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["Transcripts"]

MAX_LINES = 5000


class Transcripts:
    def __init__(self, client: RedisClient, workspace: str, ttl_sec: int) -> None:
        self.redis = client
        self.keys = WorkspaceKeys(workspace)
        self.ttl_sec = ttl_sec

    def append(self, session_id: str, speaker: str, text: str, correlation_id: str) -> None:
        self.line(session_id, speaker, text, correlation_id).send(self.redis)

    def line(self, session_id: str, speaker: str, text: str, correlation_id: str) -> StreamAppend:
        """The row ``append`` writes (the transcript lives ``ttl_sec`` from its last line),
        to be written with something else."""
        fields = {"speaker": speaker, "text": text, "correlation_id": correlation_id}
        return StreamAppend(self.keys.transcript(session_id), fields, MAX_LINES, self.ttl_sec)
