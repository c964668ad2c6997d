"""What a checkpoint holds for a key is borne out by the first record of that key after it,
which says (``prev``, on the chain) what the key held just before. Found by the attack on
issue 41: a forger who compacted the log after a head was signed, with a checkpoint that
gave a key a value it never had (one the key left before the head), passed 'log verify' and
'log verify --head' (the state at the head was the one signed), and 'state get --at' served
the forged value."""

from __future__ import annotations

import hashlib
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis import Redis

from core.state.chain import Head, verify_chain
from core.state.chain.verify import raw_rows
from core.state.checkpoints import Image, held_before
from core.state.commit_result import Committed
from core.state.compaction import Compactor, Retention
from core.state.entry import Entry
from core.state.mutation import Mutation
from core.state.mutation_log import LogRecord, MutationLog
from core.state.replay import Moment, Replayer, ReplayMismatch, apply
from core.state.store import StateStore
from tests.conftest import delete_workspace
from tests.core.state.test_chain import KEY
from tests.core.state.test_chain_start import checked
from tests.core.state.test_replay import mutations
from tests.factories import mutation


def history(store: StateStore) -> list[Committed]:
    said = [
        ("decision.db", "postgres", "user:al"),
        ("decision.db", "mysql", "user:al"),
        ("decision.owner", "al", "user:al"),
        ("decision.db", "sqlite", "user:bo"),
    ]
    done = []
    for key, value, who in said:
        outcome = store.commit(mutation("set", key, value, who))
        assert isinstance(outcome, Committed)
        done.append(outcome)
    return done


def signed_head(store: StateStore) -> Head:
    report = verify_chain(store.redis, store.keys)
    assert report.ok and report.last is not None
    state = Replayer(store).state_at(report.last.log_id)
    return Head(store.workspace, report.last, start=report.origin.digest(), state=state)


def forge_compaction(
    client: Redis, store: StateStore, through: int, change: dict[str, object | None]
) -> None:
    """A compaction as a forger writes it: the first ``through`` records trimmed, a
    checkpoint of their result with ``change`` made to it (None: the key deleted), and a
    mark that vouches for it, written as trim_log.lua writes one."""
    rows = list(raw_rows(client, store.keys.log))[:through]
    image = Image()
    for log_id, fields in rows:
        text = {k.decode(): v.decode() for k, v in fields.items()}
        apply(image, LogRecord.from_stream(log_id, text))
    for key, value in change.items():
        if value is None:
            image.entries.pop(key)  # (its version kept: as if deleted)
        else:
            image.entries[key] = image.entries[key].model_copy(update={"value": value})
    text, last = image.to_json(), rows[-1][0]
    client.xdel(store.keys.log, *(log_id for log_id, _ in rows))
    client.set(store.keys.checkpoint, text)
    client.set(store.keys.checkpoint_at, last)
    client.hset(
        store.keys.compacted,
        mapping={
            "through": last,
            "records": through,
            "at": 1,
            "first": rows[0][0],
            "chain": rows[-1][1][b"chain"].decode(),
            "checkpoint": hashlib.sha1(text.encode()).hexdigest(),
        },
    )


def test_a_forged_checkpoint_that_keeps_the_heads_state_is_refused(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    done = history(store)
    head = signed_head(store).signed(KEY)
    forge_compaction(redis_client, store, 1, {"decision.db": "oracle"})
    assert verify_chain(redis_client, store.keys).ok  # (the mark vouches for its checkpoint)
    ok, says = checked(store, head)
    assert not ok and "does not match the log" in says, says
    assert "oracle" not in says
    for moment in done[1:]:
        with pytest.raises(ReplayMismatch, match="checkpoint does not match the log"):
            Replayer(store).as_of(Moment.at_record(moment.log_id))
    _, diffs = Replayer(store).verify()
    assert len(diffs) == 1 and "checkpoint does not match the log" in diffs[0].what
    # compaction never carries it on past the record that contradicts it
    held = Compactor(store, Retention(keep_records=1)).run()
    assert held.trimmed == 0 and held.held_back is not None
    assert "checkpoint does not match the log" in held.held_back
    assert MutationLog(redis_client, store.keys).starts_at(done[1].log_id)


def test_a_key_deleted_in_a_forged_checkpoint_is_refused(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    done = history(store)
    forge_compaction(redis_client, store, 1, {"decision.db": None})
    with pytest.raises(ReplayMismatch, match="checkpoint does not match the log"):
        Replayer(store).as_of(Moment.at_record(done[1].log_id))


def test_what_a_record_says_its_key_held_compares_as_json() -> None:
    entry = Entry.built("k.n", 0.1, 2, 1, mutation("set", "k.n", 0).actor, None, {})
    assert held_before(entry, "0.10000000000000001", None)  # as commit.lua writes a sum
    assert held_before(entry, None, hashlib.sha1(b"0.10000000000000001").hexdigest())
    assert held_before(entry, None, hashlib.sha1(b"0.1").hexdigest())
    assert not held_before(entry, "0.2", None)
    assert not held_before(entry, "1", None)
    assert not held_before(entry, None, None)
    assert not held_before(entry, "not json", None)
    whole = Entry.built("k.n", 1, 2, 1, mutation("set", "k.n", 0).actor, None, {})
    assert not held_before(whole, "1.0", None) and not held_before(whole, "true", None)
    assert held_before(None, None, None) and not held_before(None, '"x"', None)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    batches=st.lists(st.lists(mutations(), max_size=8), min_size=1, max_size=5),
    keep=st.integers(1, 6),
    prev_max=st.sampled_from([1, 8, 4096]),
)
def test_any_history_compacted_any_way_bears_out_its_checkpoint(
    redis_client: Redis, batches: list[list[Mutation]], keep: int, prev_max: int
) -> None:
    """No false alarm: every record after a real compaction says its key held what the
    checkpoint holds, whole or as a SHA-1, floats and lists included."""
    workspace = f"test-{uuid.uuid4().hex[:12]}"
    store = StateStore(redis_client, workspace, prev_max_bytes=prev_max)
    try:
        for batch in batches:
            for m in batch:
                store.commit(m)
            done = Compactor(store, Retention(keep_records=keep)).run()
            assert done.held_back is None or "match" not in done.held_back, done.held_back
            _, diffs = Replayer(store).verify()
            assert diffs == [], [str(d) for d in diffs]
    finally:
        delete_workspace(redis_client, workspace)
