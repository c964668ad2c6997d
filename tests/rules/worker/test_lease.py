"""A run's lease, on redis-py's Lock: one holder at a time, and a holder whose lease lapsed and
was taken never frees or renews the new holder's, nor claims a step under it."""

from __future__ import annotations

import pytest
from redis import Redis

from rules.keys import KEEP_SEC, RuleKeys
from rules.worker.ledger import Claim, Lease, LeaseLost, StepLedger


def test_one_holder_at_a_time_and_free_again_after_release(
    redis_client: Redis, workspace: str
) -> None:
    key = RuleKeys(workspace).lease("job-1")
    first = Lease(redis_client, key, "first", 30)
    assert first.acquire()
    assert not Lease(redis_client, key, "second", 30).acquire()
    first.release()
    assert not redis_client.exists(key)
    again = Lease(redis_client, key, "second", 30)
    assert again.acquire()
    again.release()


def test_a_lapsed_holder_does_not_free_the_lease_another_worker_took(
    redis_client: Redis, workspace: str
) -> None:
    key = RuleKeys(workspace).lease("job-2")
    first = Lease(redis_client, key, "first", 30)
    assert first.acquire()
    redis_client.delete(key)  # as if it lapsed while its worker stalled
    second = Lease(redis_client, key, "second", 30)
    assert second.acquire()
    first.release()
    assert str(redis_client.get(key)).startswith("second:")
    second.release()
    assert not redis_client.exists(key)


def test_a_step_claim_by_a_worker_whose_lease_was_taken_over_is_refused(
    redis_client: Redis, workspace: str
) -> None:
    keys = RuleKeys(workspace)
    first = Lease(redis_client, keys.lease("job-3"), "first", 30)
    assert first.acquire()
    redis_client.delete(keys.lease("job-3"))  # lapsed while its worker stalled ...
    second = Lease(redis_client, keys.lease("job-3"), "second", 30)
    assert second.acquire()  # ... and another worker took the run over
    try:
        assert first.held  # its own clock has not noticed: Redis decides
        stale = StepLedger(redis_client, keys, "job-3", first)
        assert stale.claim(0) == (Claim.LOST, None)
        assert not redis_client.exists(keys.steps("job-3"))
        assert StepLedger(redis_client, keys, "job-3", second).claim(0) == (Claim.FRESH, None)
        assert stale.claim(0) == (Claim.LOST, None)  # not even told how the step stands
    finally:
        first.release()
        second.release()


def test_a_step_claim_after_the_lease_lapsed_untaken_is_refused(
    redis_client: Redis, workspace: str
) -> None:
    keys = RuleKeys(workspace)
    lease = Lease(redis_client, keys.lease("job-4"), "first", 30)
    assert lease.acquire()
    try:
        ledger = StepLedger(redis_client, keys, "job-4", lease)
        assert ledger.claim(0) == (Claim.FRESH, None)
        ledger.done(0, {"ok": True})
        redis_client.delete(keys.lease("job-4"))
        assert ledger.claim(1) == (Claim.LOST, None)
        assert redis_client.hkeys(keys.steps("job-4")) == ["0"]
        assert 0 < redis_client.ttl(keys.steps("job-4")) <= KEEP_SEC
    finally:
        lease.release()


def test_a_worker_whose_lease_was_taken_over_settles_nothing(
    redis_client: Redis, workspace: str
) -> None:
    """It claimed step 0 and stalled; the worker that took the run over settled the step:
    the stalled one may neither reopen it for a retry (the step would run again) nor mark
    it failed, nor call its connector."""
    keys = RuleKeys(workspace)
    first = Lease(redis_client, keys.lease("job-5"), "first", 30)
    assert first.acquire()
    stale = StepLedger(redis_client, keys, "job-5", first)
    assert stale.claim(0) == (Claim.FRESH, None)
    assert stale.holds(0)
    redis_client.delete(keys.lease("job-5"))  # lapsed while its worker stalled ...
    second = Lease(redis_client, keys.lease("job-5"), "second", 30)
    assert second.acquire()
    try:
        taker = StepLedger(redis_client, keys, "job-5", second)
        assert taker.claim(0) == (Claim.ABANDONED, None)
        assert not stale.holds(0)
        taker.done(0, {"reconciled": True})
        with pytest.raises(LeaseLost):
            stale.retry(0)
        with pytest.raises(LeaseLost):
            stale.failed(0, "timeout")
        assert taker.claim(0) == (Claim.DONE, {"reconciled": True})
        # the holder itself may not settle a step twice either
        with pytest.raises(LeaseLost):
            taker.failed(0, "late")
        assert taker.claim(0) == (Claim.DONE, {"reconciled": True})
    finally:
        first.release()
        second.release()
