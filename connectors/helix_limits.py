"""Waiting out Twitch Helix's rate limit. Helix answers every request with ``Ratelimit-Remaining``
and ``Ratelimit-Reset`` (epoch seconds); once the bucket is empty, further requests get 429
until the reset. So: after an answer with ``Remaining: 0`` (or a 429), the next request from
this process to that bucket waits until the reset; a 429 is retried after that wait, a bounded
number of times and for a bounded total wait. Past either bound the caller gets the last 429
back (or, when no request was made, a retryable ConnectorError) and the job retries later.

Clock and sleep are injectable so that tests can check the waiting without waiting."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rules.connector_api import ConnectorError

if TYPE_CHECKING:
    import httpx

__all__ = ["HelixLimits"]

# When a 429 comes without a usable Ratelimit-Reset, try again after this long.
FALLBACK_WAIT_SEC = 1.0


class HelixLimits:
    """Per-bucket knowledge of when an empty bucket refills. Buckets are named by the caller
    (the API URL and client id); one instance is shared by every call in the process."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
        max_attempts: int = 3,
        max_wait_sec: float = 30.0,
    ) -> None:
        self.clock, self.sleep = clock, sleep
        self.max_attempts, self.max_wait_sec = max_attempts, max_wait_sec
        self._empty_until: dict[str, float] = {}
        self._lock = threading.Lock()

    def send(self, bucket: str, request: Callable[[], httpx.Response]) -> httpx.Response:
        """Make ``request`` when the bucket allows it; retry it after a 429."""
        budget = self.max_wait_sec
        response: httpx.Response | None = None
        delay = 0.0
        for _ in range(self.max_attempts):
            delay = self.delay(bucket)
            if delay > budget:
                break
            if delay > 0:
                self.sleep(delay)
                budget -= delay
            response = request()
            self.observe(bucket, response)
            if response.status_code != 429:
                return response
        if response is not None:
            return response
        raise ConnectorError(
            f"twitch: rate limit reached; it resets in {delay:.0f} s, longer than the "
            f"{self.max_wait_sec:.0f} s this connector waits",
            retryable=True,
        )

    def delay(self, bucket: str) -> float:
        """Seconds to wait before the next request to ``bucket`` (0: go now)."""
        with self._lock:
            until = self._empty_until.get(bucket)
        return 0.0 if until is None else max(0.0, until - self.clock())

    def observe(self, bucket: str, response: httpx.Response) -> None:
        remaining = _number(response.headers.get("Ratelimit-Remaining"))
        reset = _number(response.headers.get("Ratelimit-Reset"))
        with self._lock:
            if response.status_code == 429:
                self._empty_until[bucket] = (
                    reset if reset is not None else self.clock() + FALLBACK_WAIT_SEC
                )
            elif remaining == 0 and reset is not None:
                self._empty_until[bucket] = reset
            else:
                self._empty_until.pop(bucket, None)


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None
