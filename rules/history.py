"""Every rule evaluation, fired or not and why, kept for ``deliberate trace`` and
``deliberate rules why``; and the results and failures of the actions rules ran. Each is
counted too (``core.metrics``: evaluations and steps, by outcome)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from core.metrics import RULE_EVALUATIONS, RULE_STEPS, Meter
from core.state.streams import RawRow, Row, raw_range, stream_ms, stream_rows
from core.state.value_json import dumps
from rules.keys import RuleKeys

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["BATCH", "RuleHistory", "newest_raw_rows", "newest_rows"]

Fields = TypeVar("Fields")  # a row's fields, as text or as bytes

_log = logging.getLogger("deliberate.rules")
BATCH = 1000  # records one read takes at most


def newest_rows(
    client: RedisClient, stream: str, scan: int, keep: Callable[[dict[str, str]], bool]
) -> list[Row]:
    """The rows among the newest ``scan`` of ``stream`` whose fields ``keep`` keeps, oldest
    first, read ``BATCH`` at a time (a scan of 10,000 is ten replies, none of 10,000)."""

    def read(end: str, count: int) -> list[Row]:
        return stream_rows(client.xrevrange(stream, end, "-", count=count))

    return _newest(read, scan, keep)


def newest_raw_rows(
    client: RedisClient, stream: str, scan: int, keep: Callable[[Mapping[bytes, bytes]], bool]
) -> list[RawRow]:
    """``newest_rows`` with the fields as the bytes the stream holds (a field that is not
    UTF-8 fails no read: the mutation log's records are read so)."""
    return _newest(lambda end, count: raw_range(client, stream, end, "-", count, True), scan, keep)


def _newest(
    read: Callable[[str, int], list[tuple[str, Fields]]],
    scan: int,
    keep: Callable[[Fields], bool],
) -> list[tuple[str, Fields]]:
    found: list[tuple[str, Fields]] = []
    end, left = "+", scan
    while left > 0:
        count = min(BATCH, left)
        chunk = read(end, count)
        found += [row for row in chunk if keep(row[1])]
        left = left - count if len(chunk) == count else 0
        end = f"({chunk[-1][0]}" if chunk else end
    return found[::-1]


class RuleHistory:
    def __init__(self, client: RedisClient, keys: RuleKeys, keep: int = 10_000) -> None:
        self.redis = client
        self.keys = keys
        self.keep = keep
        self.meter = Meter.of(client, keys.workspace.workspace)

    def record(self, correlation_id: str, key: str, event: str, data: dict[str, Any]) -> None:
        """``event``: ``evaluated`` (with ``fired`` and ``why``), ``action.done``,
        ``action.failed``, ``action.retry``, ``action.skipped``, ``cut``, ``error``."""
        self._count(event, data)
        self.redis.xadd(
            self.keys.evaluations,
            {"corr": correlation_id, "key": key, "event": event, "data": dumps(data)},
            maxlen=self.keep,
            approximate=True,
        )
        level = logging.WARNING if event in ("action.failed", "cut") else logging.INFO
        _log.log(
            level,
            f"rule {data.get('rule')}: {event}",
            extra={"fields": {"correlation_id": correlation_id, "key": key, **data}},
        )

    def _count(self, event: str, data: dict[str, Any]) -> None:
        if event == "evaluated":
            fired, waiting = data.get("fired") is True, data.get("waiting") is True
            self.meter.count(
                RULE_EVALUATIONS, "fired" if fired else "waiting" if waiting else "skipped"
            )
        elif event in ("cut", "error"):
            self.meter.count(RULE_EVALUATIONS, event)
        elif event.startswith("action."):
            self.meter.count(RULE_STEPS, event.removeprefix("action."))

    def run_failed(self, payload: dict[str, Any], job_id: str, error: str) -> None:
        """A run failed before or outside its steps (its rule is gone, its worker died):
        recorded from the job's payload, under the triggering mutation's correlation id."""
        data = {"rule": payload.get("rule"), "step": 0, "do": "run", "job": job_id, "error": error}
        corr, key = str(payload.get("correlationId", "-")), str(payload.get("key", ""))
        self.record(corr, key, "action.failed", data)

    def _rows(
        self, scan: int, field: str | None = None, values: Collection[str] = ()
    ) -> list[dict[str, Any]]:
        """The newest ``scan`` records (whose ``field`` is one of ``values``, if given),
        oldest first; only those are parsed (any member may ask ``why``)."""
        rows = newest_rows(
            self.redis, self.keys.evaluations, scan, lambda f: field is None or f[field] in values
        )
        return [
            {
                "id": row_id,
                "ms": stream_ms(row_id),
                "corr": f["corr"],
                "key": f["key"],
                "event": f["event"],
                "data": json.loads(f["data"]),
            }
            for row_id, f in rows
        ]

    def for_correlation(self, correlation_id: str, scan: int = 10_000) -> list[dict[str, Any]]:
        return self._rows(scan, "corr", {correlation_id})

    def for_correlations(
        self, correlation_ids: Collection[str], scan: int = 10_000
    ) -> list[dict[str, Any]]:
        """The records of any of ``correlation_ids``, oldest first: one read of the newest
        ``scan``, however many ids."""
        return self._rows(scan, "corr", correlation_ids) if correlation_ids else []

    def for_key(self, key: str, limit: int = 20, scan: int = 10_000) -> list[dict[str, Any]]:
        """The newest ``limit`` records about mutations of ``key``, oldest first."""
        return self._rows(scan, "key", {key})[-limit:]

    def recent(self, scan: int = 10_000) -> list[dict[str, Any]]:
        """The newest ``scan`` records of every rule, oldest first."""
        return self._rows(scan)
