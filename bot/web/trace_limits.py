"""What one look at the Trace page may cost. A trace is searched for in the newest
``TRACE_SCAN`` records of each log (``?scan=N`` goes further back, up to ``MAX_SCAN``: the
page offers it when nothing was found); the answer is kept ``CACHE_SEC`` in this process, so
the same id asked for again, or by several people at once, is searched once; and each
person (the operator counts as one) may open ``WebSettings.trace_per_minute`` trace pages a
minute (``bot.web.rate_limits.over_limit``): past it, 429 with ``Retry-After``."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

__all__ = ["CACHE_SEC", "MAX_SCAN", "TRACE_SCAN", "TraceCache"]

TRACE_SCAN, MAX_SCAN = 2_000, 10_000
CACHE_SEC, CACHE_SIZE = 5.0, 256

Found = tuple[str | None, list[dict[str, Any]]]


class TraceCache:
    """Answers by (workspace, id, scan), each computed once however many ask at once."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._kept: OrderedDict[tuple[str, str, int], tuple[float, Found]] = OrderedDict()
        self._locks: dict[tuple[str, str, int], threading.Lock] = {}
        self._guard = threading.Lock()
        self.computed = 0  # how many searches ran (a test counts them)

    def get(self, key: tuple[str, str, int], search: Callable[[], Found]) -> Found:
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # the others wait for the first, then read what it kept
            now = self._clock()
            with self._guard:
                kept = self._kept.get(key)
                if kept is not None and now - kept[0] < CACHE_SEC:
                    return kept[1]
            try:
                found = search()
            except BaseException:  # nothing kept: the lock goes too, or it would stay forever
                with self._guard:
                    if key not in self._kept:
                        self._locks.pop(key, None)
                raise
            with self._guard:
                self.computed += 1
                self._kept[key] = (self._clock(), found)
                self._kept.move_to_end(key)
                while len(self._kept) > CACHE_SIZE:
                    old, _ = self._kept.popitem(last=False)
                    self._locks.pop(old, None)
            return found
