"""The state as of a moment, rebuilt from the checkpoint and the log: it equals the snapshot
that was live then, and a moment the log was compacted past is refused."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis import Redis

from core.state.checkpoints import Checkpoints
from core.state.compaction import Compactor, Retention
from core.state.entry import Entry
from core.state.mutation import Mutation
from core.state.replay import BeforeHistory, Moment, Replayer, visible
from core.state.store import Snapshot, StateStore
from core.state.streams import id_order
from tests.conftest import delete_workspace
from tests.factories import mutation

KEYS = ["k.a", "k.b", "k.c"]


@st.composite
def mutations(draw: st.DrawFn) -> Mutation:
    op = draw(st.sampled_from(["set", "set", "delete", "incr", "incr"]))
    key = draw(st.sampled_from(KEYS))
    fields: dict[str, Any] = {}
    if op != "delete" and draw(st.integers(0, 5)) == 0:
        fields["ttl_sec"] = draw(st.sampled_from([0.01, 30.0]))
    value: Any = None
    if op == "set":
        value = draw(st.one_of(st.integers(-9, 9), st.text(max_size=4), st.none()))
    elif op == "incr":
        value = draw(st.integers(-5, 5))
    return mutation(op, key, value, "user:alice", **fields)


def shown(entries: dict[str, Entry]) -> dict[str, str]:
    return {
        k: json.dumps(e.model_dump(mode="json", by_alias=True), sort_keys=True)
        for k, e in entries.items()
    }


def assert_as_of_equals(store: StateStore, then: Snapshot) -> None:
    assert then.last_log_id is not None
    image = Replayer(store).as_of(Moment.at_record(then.last_log_id))
    assert image.last_id == then.last_log_id
    assert shown(visible(image, then.at_ms)) == shown(then.entries)
    assert image.versions == then.versions


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    steps=st.lists(mutations(), min_size=1, max_size=16),
    checkpoint_after=st.integers(0, 16),
    pause=st.sampled_from([0, 0.02]),
)
def test_the_state_as_of_each_commit_is_the_snapshot_then(
    redis_client: Redis,
    workspace: str,
    steps: list[Mutation],
    checkpoint_after: int,
    pause: float,
) -> None:
    space = f"{workspace}-{time.monotonic_ns()}"
    store = StateStore(redis_client, space)
    try:
        seen: list[Snapshot] = []
        compacted: str | None = None
        for n, m in enumerate(steps, 1):
            if store.commit(m).name != "committed":
                continue  # a rejection writes nothing: no moment of its own
            seen.append(store.snapshot())
            if n == checkpoint_after:  # some moments lie before the checkpoint, some after
                compacted = Compactor(store, Retention(keep_records=1)).run().through or compacted
            time.sleep(pause)
        for then in seen:
            assert then.last_log_id is not None
            if compacted is not None and id_order(then.last_log_id) < id_order(compacted):
                with pytest.raises(BeforeHistory):
                    Replayer(store).as_of(Moment.at_record(then.last_log_id))
            else:
                assert_as_of_equals(store, then)
    finally:
        delete_workspace(redis_client, space)


@pytest.fixture
def store(redis_client: Redis, workspace: str) -> StateStore:
    return StateStore(redis_client, workspace)


def test_a_time_takes_every_record_of_its_millisecond(store: StateStore) -> None:
    first = store.commit(mutation("set", "k.a", 1))
    time.sleep(0.01)
    store.commit(mutation("set", "k.a", 2))
    ms = int(first.log_id.split("-")[0])
    image = Replayer(store).as_of(Moment.at_time(ms))
    assert image.entries["k.a"].value == 1 and image.last_id == first.log_id
    assert Replayer(store).as_of(Moment.at_time(ms - 1)).last_id is None


def test_nothing_is_saved_while_rebuilding(store: StateStore) -> None:
    for _ in range(5):
        store.commit(mutation("incr", "k.n"))
    Replayer(store).as_of(Moment.at_time(int(time.time() * 1000) + 60_000))
    assert Checkpoints(store.redis, store.keys).reaches() is None


def test_a_moment_compacted_away_is_refused_naming_the_oldest(store: StateStore) -> None:
    ids = [store.commit(mutation("incr", "k.n")).log_id for _ in range(6)]
    done = Compactor(store, Retention(None, 2)).run()
    assert done.through == ids[3]
    with pytest.raises(BeforeHistory) as refused:
        Replayer(store).as_of(Moment.at_record(ids[2]))
    assert refused.value.oldest == ids[3] and f"log {ids[3]}" in str(refused.value)
    assert "oldest moment available" in str(refused.value)
    image = Replayer(store).as_of(Moment.at_record(ids[3]))
    assert image.entries["k.n"].value == 4
    assert Replayer(store).as_of(Moment.at_record(ids[4])).entries["k.n"].value == 5


def test_history_gives_each_record_with_the_state_before_it(store: StateStore) -> None:
    ids = [store.commit(mutation("incr", "k.n", 10)).log_id for _ in range(4)]
    seen = [
        (record.log_id, image.entries["k.n"].value if "k.n" in image.entries else None)
        for image, record in Replayer(store).history(
            Moment.at_record(ids[1]), Moment.at_record(ids[2])
        )
    ]
    assert seen == [(ids[1], 10), (ids[2], 20)]
    everything = list(Replayer(store).history(Moment.at_time(0), None))
    assert [record.log_id for _, record in everything] == ids
