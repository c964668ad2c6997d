"""Run by ``test_worker_signals.py`` in a process of its own (a fork of a pytest-xdist worker
would take its channels along): a ``RuleWorker`` to which a signal comes right after RQ
forked its scheduler, before RQ's handlers are in place. Prints what came of it as JSON.

    python -m tests.rules.worker.pressed_as_it_starts REDIS_URL QUEUE SIGNAL_NUMBER
"""

from __future__ import annotations

import json
import os
import signal
import sys
from types import FrameType
from typing import Any

from redis import Redis
from rq import Queue

from rules.worker.scheduler import RuleWorker


class Undeferred(Exception):
    """The handler in place before the worker's ran: the signal was not deferred."""


def _undeferred(signum: int, frame: FrameType | None) -> None:
    raise Undeferred(signal.Signals(signum).name)


class PressedAsItStarts(RuleWorker):
    """RQ's own ``_start_scheduler`` (through ``RuleWorker``'s), then ``signum``."""

    signum = signal.SIGINT

    def _start_scheduler(self, *args: Any, **kwargs: Any) -> None:
        super()._start_scheduler(*args, **kwargs)
        os.kill(os.getpid(), self.signum)


def main(url: str, name: str, signum: int) -> None:
    for each in (signal.SIGINT, signal.SIGTERM):
        signal.signal(each, _undeferred)
    queue = Queue(name, connection=Redis.from_url(url))
    worker = PressedAsItStarts([queue], connection=queue.connection)
    worker.signum = signal.Signals(signum)
    said: dict[str, Any] = {}
    try:
        said["worked"] = worker.work(with_scheduler=True)
    except Undeferred as exc:
        said["undeferred"] = str(exc)
    child = worker.scheduler._process if worker.scheduler is not None else None
    said["forked"] = child is not None
    said["alive"] = child is not None and child.is_alive()
    if child is not None and said["alive"]:  # what the bug left running
        child.kill()
    if child is not None:
        child.join(30)
        said["exitcode"] = child.exitcode
    said["interrupted"] = worker.interrupted
    said["restored"] = all(
        signal.getsignal(each) is _undeferred for each in (signal.SIGINT, signal.SIGTERM)
    )
    said["locked"] = bool(queue.connection.exists(f"rq:scheduler-lock:{name}"))
    print(json.dumps(said), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
