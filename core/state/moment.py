"""A point in the log's history, as ``--at`` names one and the CLI shows it. Apart from
``replay``, so that parsing ``--at`` loads no replay, checkpoints or chain."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from core.state.streams import id_order

__all__ = ["Moment", "moment_text"]

_LAST_SEQ = 2**64 - 1  # the largest sequence a stream id can have


def moment_text(ms: int) -> str:
    """A server time to the millisecond, as the CLI shows a moment: ``2026-11-25 10:00:00.000Z``."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"


@dataclass(frozen=True)
class Moment:
    """A point in the log's history: a server time (every record of that millisecond
    belongs to it) or one record. ``first`` and ``last``: the smallest and largest log id at
    the moment; ``at_ms``: the time whose clock decides which entries had expired."""

    first: str
    last: str
    at_ms: int

    @classmethod
    def at_time(cls, ms: int) -> Moment:
        return cls(f"{ms}-0", f"{ms}-{_LAST_SEQ}", ms)

    @classmethod
    def at_record(cls, log_id: str) -> Moment:
        ms, seq = id_order(log_id)
        return cls(f"{ms}-{seq}", f"{ms}-{seq}", ms)

    def before(self) -> Moment:
        """The moment just before this one (its records excluded)."""
        ms, seq = id_order(self.first)
        if seq:
            return Moment(f"{ms}-{seq - 1}", f"{ms}-{seq - 1}", ms)
        return Moment.at_time(max(0, ms - 1))

    def __str__(self) -> str:
        if self.first == self.last:
            return f"log {self.last} ({moment_text(self.at_ms)})"
        return moment_text(self.at_ms)
