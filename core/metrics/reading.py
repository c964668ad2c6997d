"""Reading the counts back (``deliberate web``'s ``/metrics``): each workspace's counts as
series, and what is measured when it is read rather than counted: the proposals waiting,
the mutation log's length, a Redis round trip."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.metrics.catalogue import COUNTERS, HISTOGRAMS, SEPARATOR, Counter, Histogram
from core.metrics.tally import counts_key
from core.redis.client import shard_of
from core.state.keys import WORKSPACE_DIRECTORY, WorkspaceKeys

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = [
    "PENDING_LUA",
    "Counts",
    "Gauges",
    "HistogramCounts",
    "read_counts",
    "read_gauges",
    "read_workspace",
    "round_trip_sec",
]

# KEYS[1]: a workspace's proposals index (a pending proposal scored by its deadline, epoch ms
# of the server; a resolved one by a negative number). Returns how many are pending with
# their deadline still ahead (past it, a click expires them; so does the worker's sweep).
PENDING_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
"""

_COUNTERS = {c.name: c for c in COUNTERS}
_BUCKETS = {h.bucket_series: h for h in HISTOGRAMS}
_SUMS = {h.sum_series: h for h in HISTOGRAMS}
Labels = tuple[str, ...]


@dataclass(frozen=True)
class HistogramCounts:
    """One histogram series: ``buckets`` as Prometheus has them, cumulative (``le``, how
    many took at most that long), ``+Inf`` last."""

    buckets: tuple[tuple[str, int], ...]
    sum_sec: float

    @property
    def count(self) -> int:
        return self.buckets[-1][1]


class Counts:
    """One workspace's counts, as they were read."""

    def __init__(self, fields: dict[str, int]) -> None:
        self.fields = fields

    def series(self, counter: Counter) -> dict[Labels, int]:
        """Every series of ``counter`` counted so far (and its ``known`` ones, at 0)."""
        found: dict[Labels, int] = {(v,): 0 for v in counter.known}
        if not counter.labels:
            found[()] = 0
        for field, value in self.fields.items():
            name, *values = field.split(SEPARATOR)
            if _COUNTERS.get(name) is counter and len(values) == len(counter.labels):
                found[tuple(values)] = found.get(tuple(values), 0) + value
        return found

    def get(self, counter: Counter, *values: str) -> int:
        return self.series(counter).get(tuple(values), 0)

    def histogram(self, histogram: Histogram) -> dict[Labels, HistogramCounts]:
        per_bucket: dict[Labels, dict[str, int]] = {}
        sums: dict[Labels, int] = {}
        width = len(histogram.labels)
        for field, value in self.fields.items():
            name, *values = field.split(SEPARATOR)
            if _BUCKETS.get(name) is histogram and len(values) == width + 1:
                bucket = per_bucket.setdefault(tuple(values[:width]), {})
                bucket[values[width]] = bucket.get(values[width], 0) + value
            elif _SUMS.get(name) is histogram and len(values) == width:
                sums[tuple(values)] = sums.get(tuple(values), 0) + value
        found = {}
        for labels, counted in per_bucket.items():
            running, cumulative = 0, []
            for le in histogram.les:
                running += counted.get(le, 0)
                cumulative.append((le, running))
            found[labels] = HistogramCounts(tuple(cumulative), sums.get(labels, 0) / 1e6)
        return found


@dataclass(frozen=True)
class Gauges:
    """What a workspace holds now: proposals waiting for a person (deadline ahead), and the
    records in its mutation log (compaction trims it behind a checkpoint)."""

    pending_proposals: int
    log_length: int


def read_counts(client: RedisClient, workspace: str) -> Counts:
    """``workspace``'s counts, summed over every process that counted."""
    return Counts(_fields(client.hgetall(counts_key(workspace))))


def read_gauges(client: RedisClient, workspace: str) -> Gauges:
    return read_workspace(client, workspace)[1]


def read_workspace(client: RedisClient, workspace: str) -> tuple[Counts, Gauges]:
    """``workspace``'s counts and gauges, in one round trip to the shard that holds it."""
    keys = WorkspaceKeys(workspace)
    with client.pipeline(transaction=False) as pipe:
        pipe.hgetall(keys.metrics)
        pipe.execute_command("EVAL", PENDING_LUA, 1, keys.proposals)
        pipe.xlen(keys.log)
        counted, pending, length = pipe.execute()
    return Counts(_fields(counted)), Gauges(int(pending), int(length))


def round_trip_sec(client: RedisClient) -> float:
    """How long a PING took (on a cluster: to the shard of the workspace directory)."""
    server = shard_of(client, WORKSPACE_DIRECTORY)
    start = time.perf_counter()
    server.ping()
    return time.perf_counter() - start


def _fields(reply: Any) -> dict[str, int]:
    return {_text(k): int(v) for k, v in reply.items()}


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)
