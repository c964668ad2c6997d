"""How fast a replay went: records per second over stretches of ``STRETCH`` records, and the
median of them, so that a stretch slowed by another process moves the figure little."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["STRETCH", "Pace"]

STRETCH = 1_000  # records a stretch times


@dataclass
class Pace:
    """Laps of a replay: ``lap(n)`` after each ``n`` records since the last lap (or the
    start); ``rate``, the median of their records per second."""

    clock: Callable[[], float] = time.perf_counter
    rates: list[float] = field(default_factory=list)
    _since: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        self._since = self.clock()

    def lap(self, records: int) -> None:
        now = self.clock()
        if records > 0 and now > self._since:
            self.rates.append(records / (now - self._since))
        self._since = now

    @property
    def rate(self) -> float | None:
        """Records per second, the median over the laps; None before any."""
        return statistics.median(self.rates) if self.rates else None
