"""The limits a commit is held to: how often an actor may change a key, how large a value
may grow, how many items a list may hold; and how long a mutation id is remembered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import StoreError

if TYPE_CHECKING:
    from core.state.commit_result import Committed

__all__ = [
    "DEFAULT_IDEMPOTENCY_TTL_SEC",
    "DEFAULT_PREV_MAX_BYTES",
    "LOCAL_DURABILITY",
    "NO_LIMITS",
    "CommitLimits",
    "CommitUnconfirmed",
    "Durability",
    "NotReplicated",
    "RateLimit",
    "Unacknowledged",
]


DEFAULT_IDEMPOTENCY_TTL_SEC = 7 * 86400
# a log record keeps the previous value whole up to this many bytes, and its SHA-1 beyond
DEFAULT_PREV_MAX_BYTES = 1024


@dataclass(frozen=True)
class RateLimit:
    max: int
    window_ms: int


@dataclass(frozen=True)
class CommitLimits:
    """What the commit script checks atomically on the result of a mutation: the rate of
    commits per actor and key, the size of the resulting value, the items of a list that an
    append grows (0: no limit)."""

    rate: RateLimit | None = None
    max_bytes: int = 0
    max_items: int = 0


NO_LIMITS = CommitLimits()


@dataclass(frozen=True)
class Durability:
    """How many replicas must hold a commit before it is acknowledged (Redis ``WAIT``), and
    how long to wait for them. 0 replicas: the primary's word is enough. ``retry_sec``: how
    long an interrupted commit (a server's death, a failover) is sent again, with the same
    mutation id, before the caller is told."""

    replicas: int = 0
    timeout_ms: int = 1000
    retry_sec: float = 30.0


LOCAL_DURABILITY = Durability()


class Unacknowledged(StoreError):
    """A commit nobody may count on: applied once or not at all, never twice. What people
    are told is the same whichever of the two it is."""

    said_in_full = True


class NotReplicated(Unacknowledged):
    """The commit is on the primary, but fewer replicas than asked confirmed it in time: it
    is not acknowledged. Retrying the same mutation id commits nothing twice and waits
    again."""

    def __init__(self, done: Committed, confirmed: int, wanted: int, timeout_ms: int) -> None:
        super().__init__(
            f"{done.request.key} v{done.version} is on the primary, but {confirmed} of "
            f"{wanted} replicas confirmed it within {timeout_ms} ms: not acknowledged; retry "
            "the same change (it will not be applied twice)"
        )
        self.done = done
        self.confirmed = confirmed
        self.wanted = wanted


class CommitUnconfirmed(Unacknowledged):
    """Redis did not answer a commit, sent again with the same mutation id, within the retry
    budget: it was applied once or not at all, never twice. ``subject``: the key, or what
    was being done (``proposal P``)."""

    def __init__(self, subject: str, mutation_id: str, retry_sec: float, cause: Exception) -> None:
        said = str(cause).strip() or type(cause).__name__
        super().__init__(
            f"{subject}: Redis did not confirm the change within {retry_sec:g} s ({said}); it "
            f"is applied once or not at all: send it again (mutation id {mutation_id}) or "
            "look at the key once Redis answers"
        )
        self.subject = subject
        self.mutation_id = mutation_id
