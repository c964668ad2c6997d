"""The log as a hash chain: every commit links its record to the one before, in the same
script; a record changed, deleted or put back out of place inside Redis is found and named;
compaction keeps the link the remaining records follow; a signed head holds while the log
still leads to it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis import Redis

from core.state.chain import Head, Link, check_head, link_hash, verify_chain
from core.state.chain.links import genesis
from core.state.chain.verify import raw_rows
from core.state.commit_result import Committed
from core.state.compaction import Compactor, Retention
from core.state.keys import WorkspaceKeys
from core.state.mutation import Mutation
from core.state.replay import Replayer
from core.state.store import StateStore
from tests.conftest import delete_workspace
from tests.core.state.test_replay import mutations
from tests.factories import mutation

KEY = b"s3cret"


def state_at(store: StateStore) -> Callable[[Link], str]:
    """The state at a record, rebuilt as ``deliberate log verify --head`` rebuilds it."""
    return lambda link: Replayer(store).state_at(link.log_id)


def commit(store: StateStore, n: int, key: str = "k.n") -> list[Committed]:
    done = []
    for i in range(n):
        value: Any = {"i": i, "text": "é \u2603 \U0001f600"} if i % 3 else i
        outcome = store.commit(mutation("set", key, value))
        assert isinstance(outcome, Committed)
        done.append(outcome)
    return done


Rows = list[tuple[str, dict[bytes, bytes]]]


def rewrite(client: Redis, store: StateStore, change: Callable[[Rows], Rows]) -> None:
    """Rebuild the log inside Redis with ``change`` applied, every record keeping its id
    (DEL the stream, XADD each record back with its id: what an editor of Redis can do)."""
    rows = list(raw_rows(client, store.keys.log))
    client.delete(store.keys.log)
    for log_id, fields in change(rows):
        client.xadd(store.keys.log, fields, id=log_id)  # type: ignore[arg-type]


def rechain(rows: Rows, start_hash: str, start: int = 0) -> Rows:
    """The rows with every chain field from ``start`` on recomputed (a forger's rewrite)."""
    out, prev = [], start_hash
    for i, (log_id, fields) in enumerate(rows):
        n, _, h = fields[b"chain"].decode().partition(":")
        if i >= start:
            h = link_hash(prev, int(n), fields)
            fields = {**fields, b"chain": f"{n}:{h}".encode()}
        out.append((log_id, fields))
        prev = h
    return out


def test_every_commit_links_its_record_and_the_chain_verifies(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace, prev_max_bytes=8)  # some prev kept as a hash
    done = commit(store, 40)
    again = store.commit(done[-1].request)  # a duplicate writes no record and no link
    assert isinstance(again, Committed) and again.duplicate
    rejected = store.commit(mutation("set", "k.n", 1, expected_version=0))
    assert not isinstance(rejected, Committed)
    report = verify_chain(redis_client, store.keys, batch=7)  # pages of the walk
    assert report.ok, report.broken
    assert report.records == 40 and report.unchained == 0
    assert report.last is not None and report.last.n == 40
    assert report.last.log_id == done[-1].log_id
    assert report.first is not None and report.first.log_id == done[0].log_id
    rows = list(raw_rows(redis_client, store.keys.log))
    first = rows[0][1]
    assert list(first)[-1] == b"chain"  # the last field, after what it covers
    assert first[b"chain"].decode() == f"1:{link_hash(genesis(store.keys.log), 1, first)}"
    assert any(b"prevSha1" in fields for _, fields in rows)


def test_a_changed_field_is_found_and_its_record_named(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace)
    done = commit(store, 10)
    target = done[4].log_id

    def edit(rows: Rows) -> Rows:
        return [
            (i, {**f, b"mutation": f[b"mutation"].replace(b"alice", b"mallory")})
            if i == target
            else (i, f)
            for i, f in rows
        ]

    rewrite(redis_client, store, edit)
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == target
    assert "record 5: its hash does not match" in report.broken.why
    assert report.last is not None and report.last.n == 4


def test_a_field_added_to_a_record_is_found(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace)
    done = commit(store, 5)
    target = done[2].log_id
    rewrite(
        redis_client,
        store,
        lambda rows: [(i, {b"note": b"x", **f} if i == target else f) for i, f in rows],
    )
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == target


def test_a_deleted_record_is_found_after_it(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace)
    done = commit(store, 10)
    redis_client.xdel(store.keys.log, done[3].log_id)
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == done[4].log_id
    assert "1 record(s) after" in report.broken.why and done[2].log_id in report.broken.why


def test_the_newest_record_deleted_is_found_by_the_head(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    done = commit(store, 6)
    redis_client.xdel(store.keys.log, done[-1].log_id)
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == done[-1].log_id
    assert "the chain's head, is gone" in report.broken.why
    # and the next commit, chained to the head, shows it to anyone who walks the log
    commit(store, 1)
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and "1 record(s) after" in report.broken.why


def test_a_record_stripped_of_its_hash_or_moved_is_found(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    done = commit(store, 6)
    stripped = done[2].log_id
    rewrite(
        redis_client,
        store,
        lambda rows: [
            (i, {k: v for k, v in f.items() if k != b"chain"} if i == stripped else f)
            for i, f in rows
        ],
    )
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == stripped
    assert "carries no chain hash" in report.broken.why
    # two records' contents swapped, each keeping the other's place
    delete_workspace(redis_client, workspace)
    done = commit(store, 6)

    def swap(rows: Rows) -> Rows:
        ids = [i for i, _ in rows]
        fields = [f for _, f in rows]
        fields[1], fields[2] = fields[2], fields[1]
        return list(zip(ids, fields, strict=True))

    rewrite(redis_client, store, swap)
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == done[1].log_id


def test_compaction_keeps_the_link_the_rest_follows(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace)
    done = commit(store, 30)
    trimmed = Compactor(store, Retention(keep_records=10)).run()
    assert trimmed.trimmed == 20 and trimmed.through == done[19].log_id
    mark = store.redis.hgetall(store.keys.compacted)
    assert mark["chain"].startswith("20:")
    report = verify_chain(redis_client, store.keys)
    assert report.ok, report.broken
    assert report.base is not None and report.base.log_id == done[19].log_id
    assert "continues from record 20" in report.start()
    commit(store, 5)
    assert verify_chain(redis_client, store.keys).ok
    # the first record left, deleted: found against the compacted link
    redis_client.xdel(store.keys.log, done[20].log_id)
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == done[21].log_id


def test_a_signed_head_holds_while_the_log_leads_to_it(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace)
    commit(store, 5)
    report = verify_chain(redis_client, store.keys)
    assert report.last is not None
    saved = Head(workspace, report.last).signed(KEY)
    again = Head.from_json(saved.to_json())
    assert again == saved and again.signature_ok(KEY) and not again.signature_ok(b"other")
    commit(store, 5)  # an older head is still on the chain
    later = verify_chain(redis_client, store.keys)
    assert check_head(redis_client, store.keys, again, later, state_at(store)).ok
    # compacted through it (10 records, 5 kept): the mark keeps its link, but what the head
    # vouched for is now the checkpoint, which no link covers (a forged checkpoint and mark
    # would pass): it can no longer be confirmed, and says to anchor a newer one
    Compactor(store, Retention(keep_records=5)).run()
    later = verify_chain(redis_client, store.keys)
    checked = check_head(redis_client, store.keys, again, later, state_at(store))
    assert not checked.ok and "last compacted" in checked.says and "newer head" in checked.says


def test_a_forged_head_or_a_rewritten_chain_is_refused(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace)
    done = commit(store, 8)
    report = verify_chain(redis_client, store.keys)
    assert report.last is not None
    saved = Head(workspace, report.last).signed(KEY)
    # a forged head: another hash, or a record the log never had, under the old signature
    forged = Head.from_json(saved.to_json().replace(saved.link.hash, "0" * 40))
    assert not forged.signature_ok(KEY)
    ahead = Head(workspace, Link("9999999999999-0", 99, "a" * 40)).signed(KEY)
    refused = check_head(redis_client, store.keys, ahead, report, state_at(store))
    assert not refused.ok and "forged, or the log was cut back" in refused.says
    other = Head("elsewhere", report.last).signed(KEY)
    assert not check_head(redis_client, store.keys, other, report, state_at(store)).ok
    # a forger who edits record 3 and recomputes every hash after it, and the head key:
    # the chain in Redis verifies, the anchored head does not
    target = done[2].log_id

    def forge(rows: Rows) -> Rows:
        edited = [
            (
                i,
                {**f, b"mutation": f[b"mutation"].replace(b"alice", b"mallo")}
                if i == target
                else f,
            )
            for i, f in rows
        ]
        return rechain(edited, genesis(store.keys.log), start=2)

    rewrite(redis_client, store, forge)
    last_id, fields = list(raw_rows(redis_client, store.keys.log))[-1]
    n, _, h = fields[b"chain"].decode().partition(":")
    redis_client.hset(store.keys.chain, mapping={"n": n, "hash": h, "id": last_id})
    rewritten = verify_chain(redis_client, store.keys)
    assert rewritten.ok, rewritten.broken
    checked = check_head(redis_client, store.keys, saved, rewritten, state_at(store))
    assert not checked.ok and done[-1].log_id in checked.says and "rewritten" in checked.says


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(batch=st.lists(mutations(), min_size=1, max_size=25), data=st.data())
def test_any_history_chains_and_any_edit_is_named(
    redis_client: Redis, workspace: str, batch: list[Mutation], data: st.DataObject
) -> None:
    delete_workspace(redis_client, workspace)
    store = StateStore(redis_client, workspace, prev_max_bytes=16)
    committed = [o for m in batch if isinstance(o := store.commit(m), Committed)]
    report = verify_chain(redis_client, store.keys)
    assert report.ok, report.broken
    assert report.records == len(committed)
    if not committed:
        return
    assert report.last is not None and report.last.n == len(committed)
    at = data.draw(st.integers(0, len(committed) - 1))
    target = committed[at].log_id
    rewrite(
        redis_client,
        store,
        lambda rows: [(i, {**f, b"ts": f[b"ts"] + b"0"} if i == target else f) for i, f in rows],
    )
    broken = verify_chain(redis_client, store.keys).broken
    assert broken is not None and broken.where == target


def test_the_head_key_shares_the_workspace_hash_tag(workspace: str) -> None:
    keys = WorkspaceKeys(workspace)  # one script touches both: one slot on a cluster
    assert keys.chain.startswith(keys.tag + ":") and keys.log.startswith(keys.tag + ":")
