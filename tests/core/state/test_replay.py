"""Replay: an empty snapshot plus the log, in order, rebuilds the live snapshot exactly."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis import Redis

from core.state.chain.start import vouched_base
from core.state.compaction import Compactor, Retention
from core.state.keys import WorkspaceKeys
from core.state.mutation import Mutation
from core.state.mutation_log import MutationLog
from core.state.replay import Replayer, visible
from core.state.store import StateStore
from core.state.streams import id_order
from tests.conftest import delete_workspace
from tests.factories import mutation

KEYS = ["k.a", "k.b", "k.c"]
scalars = st.one_of(
    st.integers(-1000, 1000),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.booleans(),
    st.none(),
)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=3),
    st.dictionaries(st.text(max_size=4), scalars, max_size=3),
)


@st.composite
def mutations(draw: st.DrawFn) -> Mutation:
    op = draw(st.sampled_from(["set", "set", "delete", "append", "incr"]))
    key = draw(st.sampled_from(KEYS))
    fields: dict[str, Any] = {}
    if draw(st.booleans()) and op != "delete":
        fields["ttl_sec"] = draw(st.sampled_from([0.02, 0.05, 30.0]))
    if draw(st.integers(0, 4)) == 0:
        fields["expected_version"] = draw(st.integers(0, 6))
    if op == "set":
        value: Any = draw(values)
    elif op == "append":
        value = draw(scalars)
    elif op == "incr":
        value = draw(st.one_of(st.integers(-50, 50), st.floats(-10, 10, allow_nan=False)))
    else:
        value = None
    who = draw(st.sampled_from(["user:alice", "moderator:mo", "automation:rule-1"]))
    return mutation(op, key, value, who, reason=draw(st.sampled_from(["", "why not"])), **fields)


def assert_replay_matches(store: StateStore) -> None:
    live, diffs = Replayer(store).verify(use_checkpoint=False)
    assert diffs == [], [str(d) for d in diffs]
    image = Replayer(store).rebuild(use_checkpoint=False)
    assert visible(image, live.at_ms).keys() == live.entries.keys()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    steps=st.lists(st.tuples(mutations(), st.sampled_from([0, 0, 0, 0.03])), max_size=25),
    repeat=st.lists(st.integers(0, 24), max_size=3),
)
def test_replay_equals_live_state(
    redis_client: Redis, workspace: str, steps: list[tuple[Mutation, float]], repeat: list[int]
) -> None:
    space = f"{workspace}-{time.monotonic_ns()}"
    store = StateStore(redis_client, space)
    try:
        sent = []
        for m, pause in steps:
            store.commit(m)  # rejections (conflict, type, not found) are part of the test
            sent.append(m)
            if pause:
                time.sleep(pause)
        for index in repeat:  # retried deliveries of earlier mutations change nothing
            if index < len(sent):
                store.commit(sent[index])
        assert_replay_matches(store)
    finally:
        delete_workspace(redis_client, space)


def test_replay_at_a_later_time_drops_what_expired(app_store: StateStore) -> None:
    app_store.commit(mutation("set", "k.short", "blink", ttl_sec=0.05))
    app_store.commit(mutation("set", "k.long", "stays"))
    time.sleep(0.12)
    live, diffs = Replayer(app_store).verify()
    assert diffs == []
    assert list(live.entries) == ["k.long"]
    assert live.versions == {"k.short": 1, "k.long": 1}


@pytest.fixture
def app_store(redis_client: Redis, workspace: str) -> StateStore:
    return StateStore(redis_client, workspace)


def test_a_compaction_checkpoint_lets_replay_start_part_way(app_store: StateStore) -> None:
    for i in range(30):
        app_store.commit(mutation("incr", f"k.n{i % 3}"))
    assert Compactor(app_store, Retention(keep_records=10)).run().trimmed == 20
    _, saved = vouched_base(app_store.redis, app_store.keys)
    assert saved is not None and saved.versions == {"k.n0": 7, "k.n1": 7, "k.n2": 6}
    for _ in range(5):
        app_store.commit(mutation("incr", "k.n0"))
    second = Replayer(app_store)
    image = second.rebuild()
    assert second.applied == 15 and second.started_after == saved.last_id
    assert image.entries["k.n0"].value == 15
    _, diffs = Replayer(app_store).verify()
    assert diffs == []


def test_a_replay_leaves_the_checkpoint_to_compaction(app_store: StateStore) -> None:
    """Only a compaction writes the checkpoint (which its mark vouches for): a replay,
    however long, saves none."""
    for i in range(30):
        app_store.commit(mutation("incr", f"k.n{i % 3}"))
    Replayer(app_store).rebuild()
    Replayer(app_store).verify()
    assert not app_store.redis.exists(app_store.keys.checkpoint, app_store.keys.checkpoint_at)


def test_a_replay_up_to_a_record_stops_there_in_pages_of_any_size(app_store: StateStore) -> None:
    for i in range(7):
        app_store.commit(mutation("incr", f"k.n{i % 2}"))
    ids = [r.log_id for r in MutationLog(app_store.redis, app_store.keys).records()]
    log = MutationLog(app_store.redis, app_store.keys)
    for batch in (1, 2, 3, 1000):
        upto = [r.log_id for r in log.records(after=ids[1], batch=batch, until=ids[4])]
        assert upto == ids[2:5]
    # an id without its sequence is its millisecond's first (as stream ids compare)
    ms = ids[4].split("-")[0]
    first_of_ms = [i for i in ids if id_order(i) <= (int(ms), 0)]
    assert [r.log_id for r in log.records(until=ms)] == first_of_ms and first_of_ms
    image = Replayer(app_store).rebuild(until=ids[4])
    assert image.last_id == ids[4] and sum(image.versions.values()) == 5


def test_an_unreadable_checkpoint_is_ignored(app_store: StateStore) -> None:
    app_store.commit(mutation("set", "k.a", 1))
    app_store.redis.set(app_store.keys.checkpoint, "{not json")
    replayer = Replayer(app_store)
    _, diffs = replayer.verify()
    assert diffs == [] and replayer.applied == 1


def test_verify_names_a_key_changed_behind_the_log(app_store: StateStore) -> None:
    app_store.commit(mutation("set", "k.a", "logged"))
    app_store.commit(mutation("set", "k.b", "fine"))
    app_store.redis.hset(app_store.keys.entry("k.a"), "value", '"forged"')
    _, diffs = Replayer(app_store).verify()
    assert [d.key for d in diffs] == ["k.a"]
    assert "forged" in str(diffs[0]) and "logged" in str(diffs[0])


def test_verify_names_a_key_missing_from_the_log(app_store: StateStore) -> None:
    app_store.commit(mutation("set", "k.a", 1))
    keys = WorkspaceKeys(app_store.workspace)
    app_store.redis.hset(keys.versions, "k.ghost", 1)
    app_store.redis.hset(
        keys.entry("k.ghost"),
        mapping={
            "value": "1",
            "updatedAt": "1",
            "updatedBy": '{"kind":"user","id":"x"}',
            "meta": "{}",
        },
    )
    _, diffs = Replayer(app_store).verify()
    assert {d.key for d in diffs} == {"k.ghost"}


@pytest.mark.parametrize(
    ("logged", "forged"), [(1, "1.0"), (1, "true"), ({"done": 1}, '{"done":true}')]
)
def test_verify_tells_ints_floats_and_booleans_apart(
    app_store: StateStore, logged: Any, forged: str
) -> None:
    app_store.commit(mutation("set", "k.a", logged))
    app_store.redis.hset(app_store.keys.entry("k.a"), "value", forged)
    _, diffs = Replayer(app_store).verify()
    assert [d.key for d in diffs] == ["k.a"]


def test_verify_reports_a_log_that_contradicts_itself(app_store: StateStore) -> None:
    app_store.commit(mutation("set", "k.a", 1))
    app_store.redis.hincrby(app_store.keys.versions, "k.a", 1)  # a version the log never made
    app_store.commit(mutation("set", "k.a", 2))
    _, diffs = Replayer(app_store).verify(use_checkpoint=False)
    assert [d.key for d in diffs] == ["k.a"]
    assert "the log contradicts itself" in str(diffs[0]) and "version 2" in str(diffs[0])


def test_the_snapshot_is_one_consistent_read_under_writes(app_store: StateStore) -> None:
    import threading

    stop = threading.Event()

    def write() -> None:
        while not stop.is_set():
            app_store.commit(mutation("incr", "k.busy"))

    app_store.commit(mutation("incr", "k.busy"))  # a key first written mid-read means a re-read
    writer = threading.Thread(target=write)
    writer.start()
    try:
        for _ in range(20):
            snap = app_store.snapshot(attempts=1)
            if "k.busy" in snap.entries:
                assert snap.entries["k.busy"].version == snap.versions["k.busy"]
                assert snap.entries["k.busy"].value == snap.versions["k.busy"]
    finally:
        stop.set()
        writer.join()
    _, diffs = Replayer(app_store).verify()
    assert diffs == []
