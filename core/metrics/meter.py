"""A workspace's meter: what the gateway, the runtime, the model calls and the rules count
with, by the catalogue's series (``meter.count(REJECTIONS, "conflict")``). Counting is an
addition in memory (``core.metrics.tally``): it never waits for Redis."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.metrics.catalogue import Counter, Histogram
from core.metrics.tally import Tally, tally_for
from core.state.keys import validate_workspace

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["Meter"]


class Meter:
    def __init__(self, tally: Tally, workspace: str) -> None:
        self.tally = tally
        self.workspace = validate_workspace(workspace)

    @classmethod
    def of(cls, client: RedisClient, workspace: str) -> Meter:
        """The meter of ``workspace``, counting into the process's tally for ``client``."""
        return cls(tally_for(client), workspace)

    def count(self, counter: Counter, *values: str, amount: int = 1) -> None:
        """One more (or ``amount``) of ``counter``'s series with these label values."""
        self.tally.add(self.workspace, counter.field(values), amount)

    def observe(self, histogram: Histogram, seconds: float, *values: str) -> None:
        """One observation of ``seconds`` (its bucket, and the sum) in ``histogram``."""
        seconds = max(0.0, seconds)
        self.tally.add(self.workspace, histogram.bucket_field(values, seconds))
        self.tally.add(self.workspace, histogram.sum_field(values), round(seconds * 1e6))
