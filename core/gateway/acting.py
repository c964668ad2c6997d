"""What must hold before the gateway acts for a caller that goes on while something of its
own is unconfirmed: the runtime asks a responder for its answer while the save of the turn
it answers is still on its way (``core.runtime.runner``), and a model's tools must not act
before that save is known to be made. ``first(check)``: while it is on, each proposal the
gateway is asked for runs ``check`` before anything else (which raises when the proposal
must not be made); the gateway calls ``before_acting`` at its door."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["before_acting", "first"]

_check: ContextVar[Callable[[], None] | None] = ContextVar("before_acting", default=None)


@contextmanager
def first(check: Callable[[], None]) -> Iterator[None]:
    """``check`` runs before each proposal the gateway is asked for in this context."""
    token = _check.set(check)
    try:
        yield
    finally:
        _check.reset(token)


def before_acting() -> None:
    """Run the check ``first`` set, if any (its error is the caller's)."""
    check = _check.get()
    if check is not None:
        check()
