"""Racing requests against each other: each call in a thread of its own, all let go at one
barrier, so that they really meet (a thread started late would find the first one done).
The threads are kept between rounds: hundreds of rounds cost seconds, not thread starts."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

__all__ = ["Racer", "four_eyes_broken", "person", "racer"]


class Racer:
    """Runs calls at once on ``width`` threads kept for its life."""

    def __init__(self, pool: ThreadPoolExecutor, width: int) -> None:
        self.pool = pool
        self.width = width

    def at_once(self, *calls: Callable[[], Any]) -> list[Any]:
        """What each of ``calls`` returned (or raised: the exception, returned), in their
        order, once all have ended; they start together, past one barrier."""
        assert 0 < len(calls) <= self.width, f"{len(calls)} calls on {self.width} threads"
        start = threading.Barrier(len(calls))

        def run(call: Callable[[], Any]) -> Any:
            start.wait(10)
            try:
                return call()
            except Exception as exc:  # kept, so the round can say what went wrong
                return exc

        futures = [self.pool.submit(run, call) for call in calls]
        return [f.result(30) for f in futures]


@contextmanager
def racer(width: int = 2) -> Iterator[Racer]:
    with ThreadPoolExecutor(max_workers=width) as pool:
        yield Racer(pool, width)


def person(said: object) -> str:
    """The person an actor's name in a record's ``meta`` names (``moderator:al`` and
    ``user:al`` are one person: their id)."""
    return str(said).partition(":")[2]


def four_eyes_broken(meta: dict[str, Any], actor: object, quorum: int = 1) -> str | None:
    """What a commit of a four-eyes proposal, as its record's ``meta`` and actor tell, did
    against four eyes and its quorum (None: nothing): an approver who asked for it or
    edited it, an applier who did, one person counted twice, fewer approvers than the
    quorum."""
    approvers = [person(a) for a in meta.get("approvedBy") or []]  # type: ignore[union-attr]
    asker, editor = meta.get("requestedBy"), meta.get("editedBy")
    for who, role in ((asker, "asked for it"), (editor, "edited it")):
        if who is not None and person(who) in approvers:
            return f"{who} {role} and approved it: {approvers}"
        if who is not None and person(who) == person(actor):
            return f"{who} {role} and applied it"
    if len(set(approvers)) != len(approvers):
        return f"one person counted twice: {approvers}"
    if len(approvers) < quorum:
        return f"{len(approvers)} approvers of a quorum of {quorum}: {approvers}"
    return None
