"""Replay, compaction and the seal read the log's records as the stream holds them (bytes),
where the other readers read them decoded: both readings of any fields give the same record
or the same refusal, the chain holds link after link, bytes that are not UTF-8 are named as
an unreadable record wherever it lies, never a crash, and neither pass leaves garbage in
cycles (what pausing the collector rests on)."""

from __future__ import annotations

import gc
import json
import os
from collections import Counter
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis import Redis

from core.state.chain.links import genesis
from core.state.chain.start import Follow, read_start
from core.state.chain.verify import stored_head
from core.state.commit_result import Committed
from core.state.compaction import Compactor, Retention
from core.state.mutation import Mutation
from core.state.mutation_log import LogRecord, MutationLog, UnreadableRecord
from core.state.replay import Replayer
from core.state.store import StateStore
from core.state.streams import stream_rows
from tests.conftest import delete_workspace
from tests.core.state.test_chain import commit, rechain, rewrite
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
    decoded, raw = stream_rows(redis_client.xrange(store.keys.log)), list(log.raw_rows())
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


@pytest.mark.parametrize("at", [1, 2], ids=["in-the-middle", "the-last"])
def test_bytes_that_are_not_utf8_are_an_unreadable_record_named_by_replay(
    redis_client: Redis, workspace: str, at: int
) -> None:
    """Wherever the record is: the live snapshot reads the last record's id alone."""
    store = StateStore(redis_client, workspace)
    for value in ("first", "second", "third"):
        assert isinstance(store.commit(mutation("set", "k.a", value)), Committed)
    good = list(MutationLog(redis_client, store.keys).raw_rows())[at][1]
    word = b"second" if at == 1 else b"third"
    as_committed = {b"mutation": good[b"mutation"], b"prev": good[b"prev"]}
    for field, bad in [
        (b"mutation", good[b"mutation"].replace(word, b"sec\xffond")),
        (b"prev", b'"fir\xc3st"'),  # a lead byte with no continuation
        (b"mutation", good[b"mutation"].replace(word, b"\xed\xa0\x80")),  # a surrogate
        (b"note", b"\xff"),  # a field no reader reads, which a decoding one cannot read
    ]:
        planted = plant(redis_client, store, at, {**as_committed, field: bad})
        raw = list(MutationLog(redis_client, store.keys).raw_rows())[at][1]
        with pytest.raises(UnreadableRecord) as refused:
            LogRecord.from_raw(planted, raw)
        assert refused.value.log_id == planted, f"{bad!r} in {field!r}"
        if field != b"mutation":
            assert f"its {field.decode()} field is not UTF-8" in str(refused.value)
        _, diffs = Replayer(store).verify()
        assert [(d.key, planted in d.what) for d in diffs] == [("-", True)], diffs
    rewrite(  # the record as it was: nothing else changed
        redis_client,
        store,
        lambda rows: [(i, {k: v for k, v in f.items() if k != b"note"}) for i, f in rows],
    )
    plant(redis_client, store, at, as_committed)
    assert Replayer(store).verify()[1] == []


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


_NUMBERS = ["ts", "version", "expiresAt", "prevBytes"]
# numbers as commit.lua never writes them: signs, spaces, separators, other scripts' digits
# (Arabic-Indic, fullwidth), a no-break space
_ODD = ["", "0", "007", "12", " 12", "12 ", "-1", "+1", "1_000", "1.5", "x"]
_ODD += ["\u0661\u0662", "\uff11\uff12", "\u00a012"]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    changed=st.dictionaries(
        st.sampled_from([*_NUMBERS, "prev", "prevSha1", "note"]),
        st.sampled_from(_ODD) | st.text(max_size=6),
        max_size=3,
    ),
    dropped=st.sets(st.sampled_from([*_NUMBERS, "mutation", "prev", "prevSha1"]), max_size=2),
)
def test_any_fields_read_as_bytes_or_as_text_give_the_same_record_or_the_same_refusal(
    redis_client: Redis, workspace: str, changed: dict[str, str], dropped: set[str]
) -> None:
    """A record's fields as anyone may have written them, UTF-8 text: both readings take it
    or both refuse it, saying the same (a number is ASCII digits either way)."""
    store = StateStore(redis_client, workspace, prev_max_bytes=4)
    if not len(MutationLog(redis_client, store.keys)):
        commit(store, 3)
    [(log_id, fields)] = stream_rows(redis_client.xrevrange(store.keys.log, count=1))
    text = {k: v for k, v in {**fields, **changed}.items() if k not in dropped}
    raw = {k.encode(): v.encode() for k, v in text.items()}

    def outcome(read: Callable[[], LogRecord]) -> LogRecord | str:
        try:
            return read()
        except UnreadableRecord as exc:
            return str(exc)

    as_text = outcome(lambda: LogRecord.from_stream(log_id, text))
    assert outcome(lambda: LogRecord.from_raw(log_id, raw)) == as_text
    for name in set(changed) & set(_NUMBERS) - dropped:  # (an empty expiresAt: none)
        value = changed[name]
        if not (value.isascii() and value.isdigit()) and (value or name != "expiresAt"):
            assert isinstance(as_text, str), (name, value)  # refused, by this field or another


def test_replay_and_compaction_leave_no_garbage_in_cycles(
    redis_client: Redis, workspace: str
) -> None:
    """What the collector's pause rests on: reference counting frees all they drop. Counted
    in a child forked for it, where no other thread of the test process (a server an earlier
    test left, xdist's own) makes garbage of its own meanwhile."""
    store = StateStore(redis_client, workspace)
    for n in range(300):
        key = f"k.{n % 7}"
        if n % 5 == 0:
            store.commit(mutation("incr", f"{key}.count"))
        elif n % 5 == 1:
            store.commit(mutation("append", f"{key}.list", {"n": n, "text": "é"}))
        elif n % 5 == 2:
            store.commit(mutation("set", key, {"n": n}, ttl_sec=30.0))
        else:
            store.commit(mutation("set", key, [n, str(n)]))
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the child: its own connections (redis-py's pool sees the fork)
        try:
            gc.disable()
            Compactor(store, Retention(keep_records=299)).run()  # warm: its connections, one
            gc.collect()  # record trimmed (what making them leaves is not the passes')
            gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection finds is kept in gc.garbage
            image = Replayer(store).rebuild()
            found: list[object] = [ours_in_cycles(), len(image.versions)]
            found += [Compactor(store, Retention(keep_records=50)).run().trimmed, ours_in_cycles()]
            os.write(write, json.dumps(found).encode())
        finally:
            os._exit(0)
    os.close(write)
    said = b"".join(iter(lambda: os.read(read, 4096), b""))
    os.close(read)
    assert os.waitpid(child, 0)[1] == 0
    # no garbage in cycles after either; each of 7 keys, its .count and its .list replayed
    assert json.loads(said) == [{}, 21, 249, {}]


def ours_in_cycles() -> dict[str, int]:
    """How many of each type a collection finds in cycles now, less what redis-py's cluster
    pipelines hold: each is a cycle of its own (lambdas its ``__init__`` makes close over
    it), a few a pass over the log on a Redis Cluster, none a record."""
    gc.collect()
    garbage, found = list(gc.garbage), {id(o) for o in gc.garbage}
    gc.garbage.clear()
    theirs: set[int] = set()
    todo = [o for o in garbage if type(o).__name__ == "ClusterPipeline"]
    while todo:
        held = todo.pop()
        if id(held) not in theirs:
            theirs.add(id(held))
            todo += [o for o in gc.get_referents(held) if id(o) in found]
    return dict(Counter(type(o).__qualname__ for o in garbage if id(o) not in theirs))
