"""The beat log: every evaluation of a session, appended to a capped Redis stream, so a trace
can say which beats fired on a turn and why. The evaluator stays pure; this is its I/O."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from core.deliberation.beat_evaluator import EvaluationResult
from core.runtime.stream_appends import StreamAppend
from core.state.keys import WorkspaceKeys
from core.state.streams import stream_ms, stream_rows

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["BeatHistory"]

KEEP = 10_000


class BeatHistory:
    def __init__(self, client: RedisClient, workspace: str) -> None:
        self.redis = client
        self.keys = WorkspaceKeys(workspace)

    def append(self, session_id: str, correlation_id: str, result: EvaluationResult) -> str:
        return self.row(session_id, correlation_id, result).send(self.redis)

    def row(self, session_id: str, correlation_id: str, result: EvaluationResult) -> StreamAppend:
        """The row ``append`` writes, to be written with something else."""
        fields = {"session": session_id, "correlation_id": correlation_id}
        return StreamAppend(
            self.keys.beat_history, fields | {"evaluation": result.model_dump_json()}, KEEP
        )

    def for_correlation(self, correlation_id: str, scan: int = 1000) -> list[dict[str, Any]]:
        """The evaluations of one turn or click, oldest first (among the newest ``scan``)."""
        rows = stream_rows(self.redis.xrevrange(self.keys.beat_history, count=scan))
        return [
            {"ms": stream_ms(row_id), "session": f["session"]} | json.loads(f["evaluation"])
            for row_id, f in reversed(rows)
            if f["correlation_id"] == correlation_id
        ]
