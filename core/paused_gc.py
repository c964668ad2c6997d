"""The cycle collector paused while a long pass over the log builds state: replay and
compaction make a few objects per record that live on (the image's entries, the values they
hold) and many that die at once, and the collector, which walks every object that lives on
each time enough new ones were made, took a fifth of a 100,000-record replay
(``bench/replay.py``). Nothing those passes make holds a reference cycle, so reference
counting frees all they drop; a cycle made meanwhile by another thread waits for the next
collection after the pause.

The pause is the process's (the collector is), so it is counted: threads replaying at once
each hold it, and the collector runs again when the last of them is done, and only if it ran
before the first began. A child forked meanwhile (RQ forks its scheduler from a worker whose
threads compact) has none of the threads that hold it: there the count starts again at
nothing and the collector is as it was before the pause."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]

_lock = threading.Lock()
_holders = 0
_was_enabled = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cycle collector off for the ``with`` block, then as it was before the first of
    the blocks open at once began."""
    global _holders, _was_enabled
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders = max(0, _holders - 1)  # (a child forked inside a pause starts at 0)
            if _holders == 0 and _was_enabled:
                gc.enable()


def _after_fork_in_child() -> None:
    global _lock, _holders
    _lock = threading.Lock()  # (a thread of the parent may have held it at the fork)
    if _holders and _was_enabled:
        gc.enable()
    _holders = 0


os.register_at_fork(after_in_child=_after_fork_in_child)
