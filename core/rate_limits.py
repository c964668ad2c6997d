"""How often one person may ask for what costs to read: counts kept in Redis, so that every
process and thread shares them, each in a window that starts at its first count and ends
``window_sec`` later (the key's own expiry: the server's clock, no process's). The web's
Trace and State pages and chat's ``/deliberate state``, ``log`` and ``why`` count here."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["count_once", "over_limit", "rate_key", "seconds_left"]

_PREFIX = "{deliberate}:rate:"  # one slot: a count is one key, read with its expiry


def rate_key(what: str, who: str) -> str:
    """The count's key: ``who`` hashed (an address, a person's id: nothing in clear)."""
    return f"{_PREFIX}{what}:{hashlib.sha256(who.encode()).hexdigest()[:32]}"


def over_limit(
    redis: RedisClient, what: str, who: str, limit: int, window_sec: int = 60
) -> int | None:
    """Count one ``what`` (``trace``, ``state``, ``chat-read``) for ``who`` (a workspace and
    a person, whatever their session); the seconds to wait when the count is past ``limit``,
    else None."""
    count, left_ms = count_once(redis, rate_key(what, who), window_sec)
    return None if count <= limit else seconds_left(left_ms, window_sec)


def count_once(redis: RedisClient, key: str, window_sec: int) -> tuple[int, int]:
    """One more in ``key``'s window (made with its expiry when there is none): the count and
    the milliseconds the window has left."""
    with redis.pipeline(transaction=True) as pipe:
        pipe.set(key, 0, ex=window_sec, nx=True)
        pipe.incr(key)
        pipe.pttl(key)
        _, count, left = pipe.execute()
    return int(count), int(left)


def seconds_left(left_ms: int, window_sec: int) -> int:
    """A window's milliseconds left, as ``Retry-After`` says them: whole seconds, at least 1
    (a key without an expiry, which nothing here makes, waits a whole window)."""
    if left_ms < 0:
        return window_sec
    return max(1, -(-left_ms // 1000))
