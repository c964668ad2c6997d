"""The trace log: what happened to one turn or click, by correlation id. The runtime appends
every message the loop handled and every model call's audit; ``deliberate trace`` reads it
together with the beat log, the gateway's decisions and the mutation log. While the runtime
handles a send, what its thread appends is ``held`` for the runtime to write with its next
save of the session, in the same round trip."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from core.runtime.stream_appends import StreamAppend
from core.state.keys import WorkspaceKeys
from core.state.streams import stream_ms, stream_rows
from core.state.value_json import dumps

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["TraceEvents"]

KEEP = 50_000


class TraceEvents:
    def __init__(self, client: RedisClient, workspace: str) -> None:
        self.redis = client
        self.keys = WorkspaceKeys(workspace)
        self._holding = threading.local()

    def append(self, correlation_id: str, session_id: str, event: str, data: Any) -> None:
        row = self.row(correlation_id, session_id, event, data)
        held: list[StreamAppend] | None = getattr(self._holding, "rows", None)
        if held is None:
            row.send(self.redis)
        else:
            held.append(row)

    @contextmanager
    def held(self) -> Iterator[list[StreamAppend]]:
        """The rows this thread appends meanwhile, in the list it yields, not written: whoever
        holds them writes them (and empties the list)."""
        rows: list[StreamAppend] = []
        outer, self._holding.rows = getattr(self._holding, "rows", None), rows
        try:
            yield rows
        finally:
            self._holding.rows = outer

    def row(self, correlation_id: str, session_id: str, event: str, data: Any) -> StreamAppend:
        """The row ``append`` writes, to be written with something else."""
        return self.encoded_row(correlation_id, session_id, event, dumps(data))

    def encoded_row(
        self, correlation_id: str, session_id: str, event: str, data: str
    ) -> StreamAppend:
        """``row``, its data given as JSON text already."""
        fields = {"corr": correlation_id, "session": session_id, "event": event, "data": data}
        return StreamAppend(self.keys.trace, fields, KEEP)

    def for_correlation(self, correlation_id: str, scan: int = 5000) -> list[dict[str, Any]]:
        """The events of one turn or click, oldest first (among the newest ``scan``)."""
        rows = stream_rows(self.redis.xrevrange(self.keys.trace, count=scan))
        return [
            {
                "id": row_id,
                "ms": stream_ms(row_id),
                "session": f["session"],
                "event": f["event"],
                "data": json.loads(f["data"]),
            }
            for row_id, f in reversed(rows)
            if f["corr"] == correlation_id
        ]
