"""How the benches time a call: the median of ``reps`` calls, each timed alone (a median is
what the benches quote: one slow call, a page fault or another process, does not move it)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

__all__ = ["median_ms", "median_us"]


def _median_ns(call: Callable[[], object], reps: int) -> float:
    samples = []
    for _ in range(reps):
        start = time.perf_counter_ns()
        call()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples)


def median_us(call: Callable[[], object], reps: int) -> float:
    """Median microseconds per call over ``reps`` calls."""
    return _median_ns(call, reps) / 1000


def median_ms(call: Callable[[], object], reps: int) -> float:
    """Median milliseconds per call over ``reps`` calls."""
    return _median_ns(call, reps) / 1e6
