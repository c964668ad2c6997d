"""Helix rate-limit waiting with a clock that only moves when the limiter sleeps: what it waits
for, and where it stops. The answers are real httpx responses carrying Helix's headers."""

from __future__ import annotations

import httpx
import pytest

from connectors.helix_limits import HelixLimits
from rules.connector_api import ConnectorError

NOW = 1_800_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = NOW
        self.slept: list[float] = []

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def answer(status: int, remaining: int, reset: float) -> httpx.Response:
    headers = {"Ratelimit-Limit": "800", "Ratelimit-Remaining": str(remaining)}
    headers["Ratelimit-Reset"] = str(int(reset))
    return httpx.Response(status, headers=headers)


class Script:
    """The answers a request gets, in order, and the clock time of each request."""

    def __init__(self, clock: Clock, *answers: httpx.Response) -> None:
        self.clock, self.answers, self.sent_at = clock, list(answers), list[float]()

    def __call__(self) -> httpx.Response:
        self.sent_at.append(self.clock.now)
        return self.answers.pop(0)


def limits(clock: Clock, max_attempts: int = 3, max_wait_sec: float = 30) -> HelixLimits:
    return HelixLimits(
        clock=clock.time, sleep=clock.sleep, max_attempts=max_attempts, max_wait_sec=max_wait_sec
    )


def test_a_429_waits_until_the_reset_and_retries() -> None:
    clock = Clock()
    script = Script(clock, answer(429, 0, NOW + 7), answer(200, 799, NOW + 60))

    response = limits(clock).send("b", script)

    assert response.status_code == 200
    assert clock.slept == [7.0]
    assert script.sent_at == [NOW, NOW + 7]


def test_an_empty_bucket_makes_the_next_request_wait() -> None:
    clock = Clock()
    limiter = limits(clock)
    first = Script(clock, answer(200, 0, NOW + 3))
    assert limiter.send("b", first).status_code == 200
    assert clock.slept == []

    second = Script(clock, answer(200, 799, NOW + 60))
    limiter.send("b", second)

    assert second.sent_at == [NOW + 3]
    assert limiter.delay("b") == 0


def test_buckets_are_kept_apart() -> None:
    clock = Clock()
    limiter = limits(clock)
    limiter.send("one", Script(clock, answer(200, 0, NOW + 3)))

    limiter.send("two", Script(clock, answer(200, 10, NOW + 60)))

    assert clock.slept == []
    assert limiter.delay("one") == 3


def test_retries_are_bounded_and_the_last_429_comes_back() -> None:
    clock = Clock()
    script = Script(clock, *(answer(429, 0, NOW + n) for n in (1, 2, 3, 4)))

    response = limits(clock, max_attempts=3).send("b", script)

    assert response.status_code == 429
    assert len(script.sent_at) == 3
    assert clock.slept == [1.0, 1.0]


def test_a_reset_beyond_the_wait_budget_is_not_waited_for() -> None:
    clock = Clock()
    script = Script(clock, answer(429, 0, NOW + 3600))

    response = limits(clock, max_wait_sec=30).send("b", script)

    assert response.status_code == 429
    assert clock.slept == []


def test_an_empty_bucket_beyond_the_budget_fails_before_sending() -> None:
    clock = Clock()
    limiter = limits(clock, max_wait_sec=30)
    limiter.send("b", Script(clock, answer(200, 0, NOW + 600)))
    untouched = Script(clock)

    with pytest.raises(ConnectorError) as caught:
        limiter.send("b", untouched)

    assert caught.value.retryable
    assert "600 s" in caught.value.message
    assert untouched.sent_at == []


def test_a_429_without_a_reset_waits_a_moment() -> None:
    clock = Clock()
    script = Script(clock, httpx.Response(429), httpx.Response(200))

    assert limits(clock).send("b", script).status_code == 200
    assert clock.slept == [1.0]
