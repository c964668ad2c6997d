"""Replay, compaction and the seal read the log's records as the stream holds them (bytes),
where the other readers read them decoded: both readings of any record are the same record,
each link is taken the short way, and bytes that are not UTF-8 are named as an unreadable
record, never a crash."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis import Redis

from core.state.chain.links import genesis
from core.state.chain.start import Follow, read_start
from core.state.chain.verify import stored_head
from core.state.commit_result import Committed
from core.state.mutation import Mutation
from core.state.mutation_log import LogRecord, MutationLog, UnreadableRecord
from core.state.replay import Replayer
from core.state.store import StateStore
from tests.conftest import delete_workspace
from tests.core.state.test_chain import rechain, rewrite
from tests.core.state.test_replay import mutations
from tests.factories import mutation


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(batch=st.lists(mutations(), min_size=1, max_size=20), text=st.text(max_size=12))
def test_a_record_read_as_bytes_is_the_record_read_as_text(
    redis_client: Redis, workspace: str, batch: list[Mutation], text: str
) -> None:
    delete_workspace(redis_client, workspace)
    store = StateStore(redis_client, workspace, prev_max_bytes=16)  # some kept, some hashed
    for m in [mutation("set", "k.text", text), *batch, mutation("set", "k.text", [text])]:
        store.commit(m)
    log = MutationLog(redis_client, store.keys)
    decoded, raw = list(log.rows()), list(log.raw_rows())
    assert [i for i, _ in decoded] == [i for i, _ in raw]
    follow = Follow(read_start(redis_client, store.keys))
    for (log_id, fields), (_, raw_fields) in zip(decoded, raw, strict=True):
        assert LogRecord.from_raw(log_id, raw_fields) == LogRecord.from_stream(log_id, fields)
        assert follow.raw(log_id, raw_fields) is None  # each link after the one before
    assert follow.records == len(raw) and follow.last == stored_head(redis_client, store.keys)


def plant(client: Redis, store: StateStore, at: int, change: dict[bytes, bytes]) -> str:
    """Record ``at`` of the log with ``change`` made to its fields, and the chain's links
    from it on made again to match (a forger's edit that only reading the record can find);
    its id."""
    planted = list(MutationLog(client, store.keys).raw_rows())[at][0]
    rewrite(
        client,
        store,
        lambda rows: rechain(
            [(i, {**f, **change} if i == planted else f) for i, f in rows],
            genesis(store.keys.log),
            start=at,
        ),
    )
    return planted


def test_bytes_that_are_not_utf8_are_an_unreadable_record_named_by_replay(
    redis_client: Redis, workspace: str
) -> None:
    """The record is in the middle of the log: the live snapshot reads the last record's id
    through a decoding client."""
    store = StateStore(redis_client, workspace)
    for value in ("first", "second", "third"):
        assert isinstance(store.commit(mutation("set", "k.a", value)), Committed)
    good = list(MutationLog(redis_client, store.keys).raw_rows())[1][1]
    as_committed = {b"mutation": good[b"mutation"], b"prev": good[b"prev"]}
    for field, bad in [
        (b"mutation", good[b"mutation"].replace(b"second", b"sec\xffond")),
        (b"prev", b'"fir\xc3st"'),  # a lead byte with no continuation
        (b"mutation", good[b"mutation"].replace(b"second", b"\xed\xa0\x80")),  # a surrogate
    ]:
        planted = plant(redis_client, store, 1, {**as_committed, field: bad})
        raw = list(MutationLog(redis_client, store.keys).raw_rows())[1][1]
        try:
            LogRecord.from_raw(planted, raw)
        except UnreadableRecord as exc:
            assert exc.log_id == planted
        else:
            raise AssertionError(f"{bad!r} in {field!r} was read")
        _, diffs = Replayer(store).verify()
        assert [(d.key, planted in d.what) for d in diffs] == [("-", True)], diffs
    plant(redis_client, store, 1, as_committed)
    assert Replayer(store).verify()[1] == []  # the record as it was: nothing else changed


def test_a_record_missing_a_field_is_named_with_the_field(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    assert isinstance(store.commit(mutation("set", "k.a", 1)), Committed)
    [(log_id, fields)] = list(MutationLog(redis_client, store.keys).raw_rows())
    for name in (b"ts", b"mutation", b"version"):
        partial = {k: v for k, v in fields.items() if k != name}
        try:
            LogRecord.from_raw(log_id, partial)
        except UnreadableRecord as exc:
            assert f"no {name.decode()} field" in str(exc) and "b'" not in str(exc)
        else:
            raise AssertionError(f"a record without {name!r} was read")
