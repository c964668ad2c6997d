"""Compare-and-set under real concurrency: several processes, and threads driven by
Hypothesis. No increment may be lost, and the log must hold exactly one record per win."""

from __future__ import annotations

import multiprocessing as mp
import os
import threading

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis import Redis

from bot.redis.connection import connect
from core.state.commit_result import Committed, Rejected, RejectReason
from core.state.mutation_log import MutationLog
from core.state.store import StateStore
from tests.factories import mutation


def cas_increments(store: StateStore, key: str, count: int, who: str) -> int:
    """``count`` successful read-then-CAS increments; returns the conflicts it retried."""
    conflicts = 0
    for _ in range(count):
        while True:
            version, entry = store.read(key)
            value = (entry.value if entry else 0) + 1  # type: ignore[operator]
            outcome = store.commit(mutation("set", key, value, who, expected_version=version))
            if isinstance(outcome, Committed):
                break
            assert isinstance(outcome, Rejected) and outcome.reason is RejectReason.CONFLICT
            conflicts += 1
    return conflicts


def _process_writer(workspace: str, writer: int, count: int, url: str) -> None:
    store = StateStore(connect(url), workspace)
    cas_increments(store, "bench.counter", count, f"user:p{writer}")


def assert_counter_is_exact(store: StateStore, key: str, expected: int) -> None:
    entry = store.get(key)
    assert entry is not None
    assert entry.value == expected
    assert entry.version == expected
    records = [r for r in MutationLog(store.redis, store.keys).records() if r.mutation.key == key]
    assert len(records) == expected
    assert [r.mutation.value for r in records] == list(range(1, expected + 1))


def test_cas_from_several_processes_loses_no_update(redis_client: Redis, workspace: str) -> None:
    writers, count = 4, 40
    ctx = mp.get_context("spawn")
    procs = [
        ctx.Process(target=_process_writer, args=(workspace, w, count, os.environ["REDIS_URL"]))
        for w in range(writers)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=120)
        assert proc.exitcode == 0
    assert_counter_is_exact(StateStore(redis_client, workspace), "bench.counter", writers * count)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(per_writer=st.lists(st.integers(min_value=1, max_value=15), min_size=2, max_size=5))
def test_cas_never_loses_an_update(
    redis_client: Redis, workspace: str, per_writer: list[int]
) -> None:
    key = f"bench.c{len(per_writer)}-{sum(per_writer)}-{threading.get_ident() % 997}"
    base = StateStore(redis_client, workspace)
    start = base.get(key)
    already = start.value if start else 0
    url = os.environ["REDIS_URL"]
    threads = [
        threading.Thread(
            target=cas_increments, args=(StateStore(connect(url), workspace), key, n, f"user:t{i}")
        )
        for i, n in enumerate(per_writer)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    entry = base.get(key)
    assert entry is not None
    assert entry.value == already + sum(per_writer)
    assert entry.version == entry.value
