"""The limits a commit is held to: how often an actor may change a key, how large a value
may grow, how many items a list may hold; and how long a mutation id is remembered."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_IDEMPOTENCY_TTL_SEC", "NO_LIMITS", "CommitLimits", "RateLimit"]


DEFAULT_IDEMPOTENCY_TTL_SEC = 7 * 86400


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
