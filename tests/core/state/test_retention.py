"""Retention: the log is trimmed behind a checkpoint, replay --verify still proves the
snapshot, consumer groups keep what they have not handled, expired keys leave the index."""

from __future__ import annotations

import threading
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis import Redis

from core.errors import StoreError
from core.state.chain.start import ChainBroken, vouched_base
from core.state.checkpoints import Checkpoints, HistoryCompacted
from core.state.commit_result import Committed
from core.state.compaction import Compactor, Retention, trim
from core.state.mutation import Mutation
from core.state.mutation_log import MutationLog
from core.state.replay import Replayer
from core.state.store import StateStore
from tests.conftest import delete_workspace
from tests.core.state.test_replay import mutations
from tests.factories import mutation

GROUP = "rules"


def incr(store: StateStore, key: str = "k.n", n: int = 1) -> list[Committed]:
    done = []
    for _ in range(n):
        outcome = store.commit(mutation("incr", key, 1))
        assert isinstance(outcome, Committed)
        done.append(outcome)
    return done


def consume(client: Redis, store: StateStore, count: int, ack: int | None = None) -> list[str]:
    """Read ``count`` records as the group's consumer and acknowledge the first ``ack``."""
    reply = client.xreadgroup(GROUP, "c1", {store.keys.log: ">"}, count=count)
    ids = [str(i) for i, _ in reply[0][1]] if reply else []
    for log_id in ids[: count if ack is None else ack]:
        client.xack(store.keys.log, GROUP, log_id)
    return ids


def assert_verified(store: StateStore) -> None:
    _, diffs = Replayer(store).verify()
    assert diffs == [], [str(d) for d in diffs]


def server_ms_after(client: Redis, ms: int) -> None:
    """Wait (on the server's clock, not a sleep) until it is past ``ms``."""
    while True:
        seconds, micros = client.time()
        if int(seconds) * 1000 + int(micros) // 1000 > ms:
            return


def test_count_retention_trims_behind_a_checkpoint_that_verify_uses(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    done = incr(store, n=30)
    store.commit(mutation("set", "k.s", {"a": 1}))
    done_report = Compactor(store, Retention(keep_records=10)).run()
    assert done_report.trimmed == 21
    assert done_report.through == done[20].log_id
    assert len(MutationLog(redis_client, store.keys)) == 10
    assert_verified(store)
    mark = Checkpoints(redis_client, store.keys).mark()
    assert mark is not None and mark.through == done[20].log_id and mark.records == 21
    with pytest.raises(HistoryCompacted, match="from scratch"):
        Replayer(store).verify(use_checkpoint=False)
    # the log goes on after it, and a second compaction adds to the mark
    incr(store, n=5)
    assert_verified(store)
    again = Compactor(store, Retention(keep_records=10)).run()
    assert again.trimmed == 5
    mark = Checkpoints(redis_client, store.keys).mark()
    assert mark is not None and mark.records == 26
    assert store.get("k.n") is not None and store.get("k.n").value == 35  # type: ignore[union-attr]
    assert_verified(store)


def test_age_retention_keeps_the_newest_record_always(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace)
    done = incr(store, n=5)
    server_ms_after(redis_client, done[-1].ts + 2)
    report = Compactor(store, Retention(keep_ms=1)).run()
    assert report.trimmed == 4 and report.log_length == 1
    assert_verified(store)


def test_no_retention_trims_nothing(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace)
    incr(store, n=5)
    assert Compactor(store, Retention()).run().trimmed == 0
    assert len(MutationLog(redis_client, store.keys)) == 5


def test_a_consumer_group_keeps_what_it_has_not_handled(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    redis_client.xgroup_create(store.keys.log, GROUP, id="0", mkstream=True)
    done = incr(store, n=20)
    report = Compactor(store, Retention(keep_records=1)).run()
    assert report.trimmed == 0 and report.held_back is not None
    assert "'rules' has not handled" in report.held_back
    # 12 delivered, 8 of them acknowledged: the 9th (pending) and everything after stay
    delivered = consume(redis_client, store, 12, ack=8)
    report = Compactor(store, Retention(keep_records=1)).run()
    assert report.trimmed == 8 and report.through == delivered[7]
    assert report.held_back is not None
    pending = redis_client.xpending_range(store.keys.log, GROUP, "-", "+", 100)
    assert [str(p["message_id"]) for p in pending] == delivered[8:]
    rows = redis_client.xrange(store.keys.log, delivered[8], delivered[8])
    assert rows, "a pending record was trimmed"
    # once handled, they go too; the newest record always stays
    for log_id in delivered[8:]:
        redis_client.xack(store.keys.log, GROUP, log_id)
    consume(redis_client, store, 100)
    report = Compactor(store, Retention(keep_records=1)).run()
    assert report.trimmed == 11 and report.log_length == 1 and report.held_back is None
    assert report.through == done[-2].log_id
    assert_verified(store)


def test_an_unreadable_record_stops_compaction_before_it(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    incr(store, n=3)
    planted = str(redis_client.xadd(store.keys.log, {"mutation": "{", "version": "4", "ts": "1"}))
    incr(store, n=3)
    report = Compactor(store, Retention(keep_records=1)).run()
    assert report.trimmed == 3
    assert report.held_back is not None and planted in report.held_back
    assert redis_client.xrange(store.keys.log, planted, planted)


def test_a_trim_after_another_compaction_moved_the_mark_does_nothing(
    redis_client: Redis, workspace: str
) -> None:
    """The checkpoint, the trim and the mark are written in one step, and only while the
    mark is where the checkpoint was carried from: a compaction that started before another
    one finished writes nothing."""
    store = StateStore(redis_client, workspace)
    done = incr(store, n=10)
    started_early = Replayer(store).rebuild(until=done[8].log_id)
    assert Compactor(store, Retention(keep_records=3)).run().trimmed == 7
    before = redis_client.hgetall(store.keys.compacted), redis_client.get(store.keys.checkpoint)
    text = started_early.to_json()
    assert trim(redis_client, store.keys, done[8].log_id, text, done[8].log_id, "") == -1
    assert (
        redis_client.hgetall(store.keys.compacted),
        redis_client.get(store.keys.checkpoint),
    ) == before
    assert len(MutationLog(redis_client, store.keys)) == 3
    _, checkpoint = vouched_base(redis_client, store.keys)
    assert checkpoint is not None and checkpoint.last_id == done[6].log_id
    assert_verified(store)
    # from where the mark is, it goes on
    moved = trim(redis_client, store.keys, done[8].log_id, text, done[8].log_id, done[6].log_id)
    assert moved == 2
    assert_verified(store)


def test_verify_survives_a_compaction_in_the_middle_of_its_replay(
    redis_client: Redis, workspace: str
) -> None:
    """The replay pages through the log; the compaction trims past the page it is on (run
    here from the replay's own progress report, at its 10,000th record)."""
    store = StateStore(redis_client, workspace)
    pipe_size = 1000
    for start in range(0, 15_000, pipe_size):
        for i in range(start, start + pipe_size):
            store.commit(mutation("set", f"k.{i % 3000}", i))
    compactions: list[int] = []

    def compact_now(applied: int) -> None:
        if not compactions:
            compactions.append(Compactor(store, Retention(keep_records=2000)).run().trimmed)

    live, diffs = Replayer(store, progress=compact_now).verify()
    assert compactions == [13_000]
    assert diffs == [], [str(d) for d in diffs[:5]]
    assert len(live.entries) == 3000
    assert_verified(store)


def test_the_checkpoint_of_a_compaction_drops_what_had_expired(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    short = [store.commit(mutation("set", f"k.t{i}", i, ttl_sec=0.001)) for i in range(20)]
    last = short[-1]
    assert isinstance(last, Committed) and last.expires_at is not None
    server_ms_after(redis_client, last.expires_at + 1)
    incr(store, n=3)
    Compactor(store, Retention(keep_records=1)).run()
    _, checkpoint = vouched_base(redis_client, store.keys)
    assert checkpoint is not None and list(checkpoint.entries) == ["k.n"]
    assert checkpoint.versions["k.t0"] == 1  # versions are never forgotten
    assert_verified(store)


def test_history_before_the_checkpoint_cannot_be_rebuilt_once_compacted(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    done = incr(store, n=10)
    Compactor(store, Retention(keep_records=3)).run()
    with pytest.raises(HistoryCompacted, match="before the checkpoint"):
        Replayer(store).rebuild(until=done[2].log_id)
    redis_client.delete(store.keys.checkpoint)
    with pytest.raises(ChainBroken, match="is missing, though the log was compacted"):
        Replayer(store).rebuild()
    held = Compactor(store, Retention(keep_records=1)).run()
    assert held.trimmed == 0 and held.held_back is not None and "is missing" in held.held_back


def test_a_retry_after_its_record_was_compacted_commits_nothing(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    first = mutation("set", "k.s", {"doc": "v1"})
    counted = mutation("incr", "k.n", 5)
    assert isinstance(store.commit(first), Committed)
    assert isinstance(store.commit(counted), Committed)
    incr(store, "k.n", 3)
    incr(store, "k.other", 3)
    assert Compactor(store, Retention(keep_records=1)).run().trimmed == 7
    again = store.commit(first)
    assert isinstance(again, Committed) and again.duplicate and again.version == 1
    assert again.value_known and again.entry is not None and again.entry.value == {"doc": "v1"}
    # the key moved on and the record with its prev is gone: the value cannot be told
    moved = store.commit(counted)
    assert isinstance(moved, Committed) and moved.duplicate and moved.version == 1
    assert not moved.value_known and moved.entry is None
    assert store.version("k.n") == 4  # nothing committed twice
    found = store.committed(counted.id, request=counted)
    assert found is not None and found.version == 1 and not found.value_known


def test_expired_keys_leave_the_index(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace)
    short = store.commit(mutation("set", "k.short", 1, ttl_sec=0.001))
    store.commit(mutation("set", "k.long", 2))
    assert isinstance(short, Committed) and short.expires_at is not None
    server_ms_after(redis_client, short.expires_at + 1)
    assert redis_client.zcard(store.keys.index) == 2
    assert Compactor(store, Retention()).run().index_dropped == 1
    assert [str(k) for k in redis_client.zrange(store.keys.index, 0, -1)] == ["k.long"]
    assert [e.key for e in store.entries()] == ["k.long"]
    # written again, it is listed again
    store.commit(mutation("set", "k.short", 3))
    assert [e.key for e in store.entries("k.")] == ["k.long", "k.short"]
    assert_verified(store)


def test_one_compaction_at_a_time(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace)
    incr(store, n=3)
    redis_client.set(store.keys.compacting, "someone-else", px=60_000)
    assert Compactor(store, Retention(keep_records=1)).run().busy
    assert len(MutationLog(redis_client, store.keys)) == 3


def test_compaction_while_others_commit_loses_no_acknowledged_commit(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    acknowledged: list[Committed] = []
    stop = threading.Event()

    def writer(key: str) -> None:
        own = StateStore(redis_client, workspace)
        while not stop.is_set() and len(acknowledged) < 300:
            outcome = own.commit(mutation("incr", key, 1))
            assert isinstance(outcome, Committed)
            acknowledged.append(outcome)

    threads = [threading.Thread(target=writer, args=(f"k.{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
    compactions = 0
    while any(t.is_alive() for t in threads):
        compactions += Compactor(store, Retention(keep_records=20)).run().trimmed > 0
    stop.set()
    for thread in threads:
        thread.join()
    Compactor(store, Retention(keep_records=20)).run()
    assert compactions > 0
    for i in range(3):
        mine = [c for c in acknowledged if c.request.key == f"k.{i}"]
        entry = store.get(f"k.{i}")
        assert entry is not None and entry.value == entry.version == len(mine)
    assert_verified(store)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    batches=st.lists(st.lists(mutations(), max_size=8), min_size=1, max_size=5),
    keep=st.integers(1, 6),
)
def test_any_history_compacted_any_way_still_verifies(
    redis_client: Redis, batches: list[list[Mutation]], keep: int
) -> None:
    workspace = f"test-{uuid.uuid4().hex[:12]}"
    store = StateStore(redis_client, workspace)
    try:
        for batch in batches:
            for m in batch:
                store.commit(m)
            log = MutationLog(redis_client, store.keys)
            before = len(log)
            Compactor(store, Retention(keep_records=keep)).run()
            assert len(log) == min(before, keep)
            assert_verified(store)
        mark = Checkpoints(redis_client, store.keys).mark()
        _, checkpoint = vouched_base(redis_client, store.keys)
        if mark is not None:
            assert checkpoint is not None and checkpoint.last_id == mark.through
            assert mark.sealed and mark.first is not None
    finally:
        delete_workspace(redis_client, workspace)


def test_a_retry_after_compaction_keeps_the_expiry_and_never_trusts_its_own_payload(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    timed = mutation("set", "k.timed", "v1", ttl_sec=3600)
    first = store.commit(timed)
    assert isinstance(first, Committed) and first.expires_at is not None
    incr(store, n=3)
    Compactor(store, Retention(keep_records=1)).run()
    again = store.commit(timed)
    assert isinstance(again, Committed) and again.duplicate and again.value_known
    assert again.expires_at == first.expires_at and again.entry is not None
    assert again.entry.value == "v1"
    # the same id reused for another change is answered with what the first one set
    forged = timed.model_copy(update={"value": {"evil": True}})
    answered = store.commit(forged)
    assert isinstance(answered, Committed) and answered.duplicate
    assert answered.entry is not None and answered.entry.value == "v1"
    assert store.get("k.timed").value == "v1"  # type: ignore[union-attr]


def test_an_older_release_idempotency_record_whose_log_record_is_gone(
    redis_client: Redis, workspace: str
) -> None:
    """An older release wrote "<logId>\\n<value>": with the record gone, its value must not
    be read as a version."""
    store = StateStore(redis_client, workspace)
    done = incr(store, n=4)
    Compactor(store, Retention(keep_records=1)).run()
    old = mutation("incr", "k.n", 1)
    redis_client.set(store.keys.idempotency(old.id), f"{done[2].log_id}\n3")
    with pytest.raises(StoreError, match="no longer holds"):
        store.commit(old)
    assert store.version("k.n") == 4
