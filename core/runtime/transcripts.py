"""Transcripts: every turn of a session, kept for display and audit. Write-only as far as the
model is concerned: nothing here produces a PromptFrame, and no model call reads it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.state.keys import WorkspaceKeys
from core.state.streams import stream_rows

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["TranscriptLine", "Transcripts"]

MAX_LINES = 5000


@dataclass(frozen=True)
class TranscriptLine:
    line_id: str
    speaker: str
    text: str
    correlation_id: str


class Transcripts:
    def __init__(self, client: Redis, workspace: str, ttl_sec: int) -> None:
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

    def for_display(self, session_id: str, count: int = 50) -> list[TranscriptLine]:
        """The newest ``count`` lines, oldest first: for people to read, not for models."""
        rows = stream_rows(self.redis.xrevrange(self.keys.transcript(session_id), count=count))
        return [
            TranscriptLine(i, f["speaker"], f["text"], f["correlation_id"])
            for i, f in reversed(rows)
        ]
