"""No silent copies: an idempotency record keeps the log id and version, never the value;
a log record keeps a long previous value as its SHA-1 and length only."""

from __future__ import annotations

import hashlib

from redis import Redis

from core.state.commit_result import Committed
from core.state.mutation_log import MutationLog
from core.state.replay import Replayer
from core.state.store import StateStore
from core.state.value_json import dumps
from rules.variables import after_value, was
from tests.conftest import delete_workspace
from tests.factories import mutation

DOC = {"title": "design", "body": "x" * 14_000}


def committed(store: StateStore, *args: object, **fields: object) -> Committed:
    outcome = store.commit(mutation(*args, **fields))  # type: ignore[arg-type]
    assert isinstance(outcome, Committed), outcome
    return outcome


def footprint(client: Redis, store: StateStore) -> int:
    """Bytes Redis uses for the workspace's keys (MEMORY USAGE of each)."""
    return sum(
        int(client.memory_usage(key, samples=0) or 0)
        for key in client.scan_iter(match=store.keys.every_key, count=1000)
    )


def test_an_idempotency_record_keeps_the_log_id_version_and_request_only(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    done = committed(store, "set", "artifact.doc", DOC)
    record = redis_client.get(store.keys.idempotency(done.request.id))
    log_id, version, request = record.split("\n")
    assert (log_id, version) == (done.log_id, "v1")
    assert len(request) == 16 and int(request, 16) >= 0  # (the request's id, never the value)
    again = store.commit(done.request)
    assert isinstance(again, Committed) and again.duplicate
    assert again.entry is not None and again.entry.value == DOC


def test_a_long_previous_value_is_kept_as_its_hash(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace, prev_max_bytes=1024)
    committed(store, "set", "artifact.doc", DOC)
    committed(store, "set", "artifact.doc", {"title": "short"})
    committed(store, "set", "artifact.doc", {"title": "shorter"})
    first, second, third = MutationLog(redis_client, store.keys).latest(3)
    assert first.prev_kept and first.prev is None
    rows = redis_client.xrange(store.keys.log, second.log_id, second.log_id)
    assert "prev" not in rows[0][1]
    assert not second.prev_kept and second.prev_bytes == len(dumps(DOC))
    assert second.prev_sha1 == hashlib.sha1(dumps(DOC).encode()).hexdigest()
    assert third.prev_kept and third.prev == {"title": "short"}
    # a rule's from: still tells what the key was, by the hash of its JSON text
    assert was(second, DOC) and not was(second, {"title": "design"})
    assert was(third, {"title": "short"})
    _, diffs = Replayer(store).verify(use_checkpoint=False)
    assert diffs == []


def test_an_append_to_a_long_list_after_a_hashed_prev(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace, prev_max_bytes=64)
    committed(store, "set", "artifact.items", ["a" * 80])
    done = committed(store, "append", "artifact.items", "b")
    (record,) = MutationLog(redis_client, store.keys).latest(1)
    assert not record.prev_kept and after_value(record) is None
    # the retry is answered exactly while the key is still at its version
    again = store.commit(done.request)
    assert isinstance(again, Committed) and again.value_known
    assert again.entry is not None and again.entry.value == ["a" * 80, "b"]
    committed(store, "append", "artifact.items", "c")
    moved = store.commit(done.request)
    assert isinstance(moved, Committed) and moved.duplicate and not moved.value_known
    assert store.version("artifact.items") == 3


def test_appends_to_a_document_cost_the_appended_items_not_copies_of_it(
    redis_client: Redis, workspace: str
) -> None:
    """The issue's case: 400 appends to a 14 KB document cost 4.7 MB when every log record
    copied the value before and every idempotency record the value after."""
    unbounded = StateStore(redis_client, f"{workspace}-unbounded", prev_max_bytes=0)
    bounded = StateStore(redis_client, workspace)
    try:
        for store in (unbounded, bounded):
            committed(store, "set", "artifact.notes", ["x" * 14_000])
            for i in range(400):
                committed(store, "append", "artifact.notes", f"note {i}")
        small, large = footprint(redis_client, bounded), footprint(redis_client, unbounded)
        assert large > 400 * 14_000  # the copies are there without the cap
        assert small < large / 20
        entry = bounded.get("artifact.notes")
        assert entry is not None and len(entry.value) == 401  # type: ignore[arg-type]
    finally:
        delete_workspace(redis_client, f"{workspace}-unbounded")
