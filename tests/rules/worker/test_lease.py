"""A run's lease, on redis-py's Lock: one holder at a time, and a holder whose lease lapsed and
was taken never frees or renews the new holder's."""

from __future__ import annotations

from redis import Redis

from rules.keys import RuleKeys
from rules.worker.ledger import Lease


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
