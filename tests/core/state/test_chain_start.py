"""The chain vouches for the start of the log: a record planted before record 1, between two
chained records or after the head is a break; deleting the first records is found, with or
without a forged compaction mark; the mark vouches for the checkpoint, and an edited mark or
checkpoint, or one from another workspace, is found; a signed head refuses a start changed
under it and confirms one a compaction moved. Replay, ``as of`` and compaction never answer
from a log that does not verify as far as they read it. A start an older release left is
sealed once, checked against the live state."""

from __future__ import annotations

import hashlib
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis import Redis

from core.state.chain import ChainBroken, Head, Link, check_head, verify_chain
from core.state.chain.seal import seal
from core.state.chain.start import vouched_base
from core.state.chain.verify import raw_rows
from core.state.checkpoints import Image
from core.state.commit_result import Committed
from core.state.compaction import Compactor, Retention
from core.state.mutation import Mutation
from core.state.mutation_log import MutationLog
from core.state.replay import BeforeHistory, Moment, Replayer, apply
from core.state.store import StateStore
from core.state.streams import id_order
from tests.conftest import delete_workspace
from tests.core.state.test_chain import KEY, Rows, commit, rewrite
from tests.core.state.test_replay import mutations
from tests.factories import mutation
from tests.polling import wait_for


def plant(client: Redis, store: StateStore, log_id: str, key: str = "decision.owner") -> None:
    """An unchained record at ``log_id`` (the issue's: an admin's write nobody made), put in
    its place in the stream (DEL, XADD each record back: what an editor of Redis can do)."""
    forged = mutation("set", key, "mallory", "admin:boss")
    fields = {
        b"mutation": forged.to_json().encode(),
        b"version": b"1",
        b"ts": log_id.split("-")[0].encode(),
        b"expiresAt": b"",
        b"prev": b"",
    }

    def put(rows: Rows) -> Rows:
        return sorted([*rows, (log_id, fields)], key=lambda row: id_order(row[0]))

    rewrite(client, store, put)


def now(store: StateStore) -> Moment:
    return Moment.at_time(int(store.redis.time()[0]) * 1000 + 1000)


def head_of(store: StateStore) -> Head:
    """The chain's head signed as ``deliberate log head`` signs it."""
    report = verify_chain(store.redis, store.keys)
    assert report.ok and report.last is not None, report.broken
    mark = report.origin.mark
    return Head(
        store.workspace,
        report.last,
        start=report.origin.digest(),
        state=Replayer(store).state_at(report.last.log_id),
        compacted=None if mark is None else mark.through,
    ).signed(KEY)


def checked(store: StateStore, head: Head) -> tuple[bool, str]:
    report = verify_chain(store.redis, store.keys)
    done = check_head(
        store.redis,
        store.keys,
        head,
        report,
        lambda link: Replayer(store).state_at(link.log_id),
    )
    return done.ok, done.says


def test_a_record_planted_before_record_1_is_a_break_and_never_served(
    redis_client: Redis, workspace: str
) -> None:
    """The issue's reproduction: an unchained record at 1-0 passed verify and verify --head,
    and 'state get --at' served its value as written before the log was chained."""
    store = StateStore(redis_client, workspace)
    commit(store, 3, key="decision.db")
    head = head_of(store)
    plant(redis_client, store, "1-0")
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == "1-0"
    assert "before" in report.broken.why and "chain's first record" in report.broken.why
    assert not report.broken.unsealed
    ok, says = checked(store, head)
    assert not ok and "broken" in says
    with pytest.raises(ChainBroken, match="1-0"):
        Replayer(store).as_of(now(store))
    with pytest.raises(ChainBroken):
        Replayer(store).verify()
    length = redis_client.xlen(store.keys.log)
    held = Compactor(store, Retention(keep_records=1)).run()
    assert held.trimmed == 0 and held.held_back is not None and "1-0" in held.held_back
    assert redis_client.xlen(store.keys.log) == length
    assert not redis_client.exists(store.keys.compacted)


def test_a_copy_of_record_1_put_before_it_is_a_break(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace)
    done = commit(store, 3)
    first = next(iter(raw_rows(redis_client, store.keys.log)))[1]
    rewrite(redis_client, store, lambda rows: [("1-0", first), *rows])
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == done[0].log_id
    assert "out of place" in report.broken.why


def test_a_record_planted_between_two_chained_ones_is_a_break(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    done = commit(store, 2, key="decision.db")
    ms, seq = id_order(done[1].log_id)
    wait_for(lambda: int(redis_client.time()[0]) * 1000 > ms + 1, "the next millisecond")
    done += commit(store, 2, key="decision.db")
    between = f"{ms}-{seq + 1}"
    assert id_order(between) < id_order(done[2].log_id)
    plant(redis_client, store, between)
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == between
    assert f"record 2 ({done[1].log_id}) before it does" in report.broken.why
    with pytest.raises(ChainBroken, match=between):
        Replayer(store).as_of(now(store))
    # the record after the moment asked must follow on the chain too (records deleted
    # there would make the answer short: test_chain_end.py); before that, it is answered
    with pytest.raises(ChainBroken, match=between):
        Replayer(store).as_of(Moment.at_record(done[1].log_id))
    image = Replayer(store).as_of(Moment.at_record(done[0].log_id))
    assert image.last_id == done[0].log_id


def test_a_record_added_after_the_head_is_a_break(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace)
    done = commit(store, 3, key="decision.db")
    forged = mutation("set", "decision.owner", "mallory", "admin:boss")
    after = redis_client.xadd(
        store.keys.log,
        {"mutation": forged.to_json(), "version": "1", "ts": "1", "expiresAt": "", "prev": ""},
    )
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == after
    assert f"record 3 ({done[-1].log_id}) before it does" in report.broken.why
    with pytest.raises(ChainBroken, match=after):
        Replayer(store).as_of(now(store))
    commit(store, 1, key="decision.db")  # the next commit chains past it: still a break
    assert verify_chain(redis_client, store.keys).broken is not None


def test_deleting_the_first_records_is_found(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace)
    done = commit(store, 6)
    redis_client.xtrim(store.keys.log, minid=done[3].log_id, approximate=False)
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == done[3].log_id
    assert "is record 4 of the chain where 1 is due" in report.broken.why
    assert "no compaction mark says they were compacted" in report.broken.why
    with pytest.raises(ChainBroken):
        Replayer(store).as_of(now(store))


def test_the_first_records_deleted_under_a_forged_mark_vouch_for_nothing(
    redis_client: Redis, workspace: str
) -> None:
    """A mark as the older release wrote it (through, records, at, the last link) is what
    a forger who deleted the first records can write: it vouches for no checkpoint, so the
    log is unsealed, never OK, and no state is rebuilt from it."""
    store = StateStore(redis_client, workspace)
    done = commit(store, 6)
    third = list(raw_rows(redis_client, store.keys.log))[2][1][b"chain"].decode()
    redis_client.xtrim(store.keys.log, minid=done[3].log_id, approximate=False)
    redis_client.hset(
        store.keys.compacted,
        mapping={"through": done[2].log_id, "records": 3, "at": 1, "chain": third},
    )
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.unsealed
    assert report.broken.where == store.keys.compacted and "log seal" in report.broken.why
    with pytest.raises(ChainBroken, match="not vouched for"):
        Replayer(store).as_of(now(store))
    held = Compactor(store, Retention(keep_records=1)).run()
    assert held.trimmed == 0 and held.held_back is not None and "log seal" in held.held_back
    refused = seal(store)  # no checkpoint holds what went: nothing to check, nothing sealed
    assert not refused.done and "checkpoint is missing" in refused.says


def test_a_sealed_mark_forged_over_deleted_records_is_refused_by_the_head(
    redis_client: Redis, workspace: str
) -> None:
    """A forger who deletes the first records and writes a mark as this release does (the
    last link, the checkpoint's SHA-1) has compacted the log: a plain verify cannot tell. The
    state the checkpoint holds can: a head signed before refuses a planted one, and replay
    --verify finds it against the live state; a faithful one is confirmed."""
    store = StateStore(redis_client, workspace)
    done = commit(store, 6, key="decision.db")
    head = head_of(store)
    faithful = Replayer(store).rebuild(until=done[2].log_id)
    planted = Image.from_json(faithful.to_json())
    planted.entries["decision.owner"] = planted.entries["decision.db"].model_copy(
        update={"key": "decision.owner", "value": "mallory"}
    )
    planted.versions["decision.owner"] = 1
    third = list(raw_rows(redis_client, store.keys.log))[2][1][b"chain"].decode()
    redis_client.xtrim(store.keys.log, minid=done[3].log_id, approximate=False)

    def forge(image: Image) -> None:
        text = image.to_json()
        redis_client.set(store.keys.checkpoint, text)
        redis_client.set(store.keys.checkpoint_at, done[2].log_id)
        redis_client.hset(
            store.keys.compacted,
            mapping={
                "through": done[2].log_id,
                "records": 3,
                "at": 1,
                "chain": third,
                "first": done[0].log_id,
                "checkpoint": hashlib.sha1(text.encode()).hexdigest(),
            },
        )

    forge(planted)
    assert verify_chain(redis_client, store.keys).ok  # whoever writes Redis can compact
    ok, says = checked(store, head)
    assert not ok and "not the one the head was signed on" in says and "forged" in says
    _, diffs = Replayer(store).verify()
    assert [d.key for d in diffs] == ["decision.owner", "decision.owner"]
    forge(faithful)
    ok, says = checked(store, head)
    assert ok and "start moved" in says and f"compacted through {done[2].log_id}" in says


def compacted_store(client: Redis, workspace: str, n: int = 10, keep: int = 4) -> StateStore:
    store = StateStore(client, workspace)
    commit(store, n, key="decision.db")
    assert Compactor(store, Retention(keep_records=keep)).run().trimmed == n - keep
    assert verify_chain(client, store.keys).ok
    return store


@pytest.mark.parametrize(
    ("field", "value", "where", "why"),
    [
        ("checkpoint", "0" * 40, "checkpoint", "not the " + "0" * 40),
        ("chain", "6:" + "a" * 40, "first kept", "hash does not match"),
        ("chain", "5:" + "a" * 40, "first kept", "where 6 is due"),
        ("records", "2", "compacted", "counts 2 record(s)"),
        ("through", "first kept", "checkpoint_at", "short of"),
        ("first", "9999999999999-0", "compacted", "is after its last"),
        ("chain", "x", "compacted", "unreadable"),
        ("records", "many", "compacted", "not numbers"),
    ],
)
def test_an_edited_mark_is_found(
    redis_client: Redis, workspace: str, field: str, value: str, where: str, why: str
) -> None:
    store = compacted_store(redis_client, workspace)
    kept = next(iter(raw_rows(redis_client, store.keys.log)))[0]
    redis_client.hset(store.keys.compacted, field, kept if value == "first kept" else value)
    report = verify_chain(redis_client, store.keys)
    named = {
        "checkpoint": store.keys.checkpoint,
        "checkpoint_at": store.keys.checkpoint_at,
        "compacted": store.keys.compacted,
    }
    assert report.broken is not None and report.broken.where == named.get(where, kept)
    assert why in report.broken.why
    with pytest.raises(ChainBroken):
        Replayer(store).as_of(now(store))


def test_a_mark_edited_where_nothing_else_tells_is_refused_by_the_head(
    redis_client: Redis, workspace: str
) -> None:
    store = compacted_store(redis_client, workspace)
    head = head_of(store)
    assert checked(store, head)[0]
    redis_client.hset(store.keys.compacted, "at", 1)  # when: told, checked by nothing else
    assert verify_chain(redis_client, store.keys).ok
    ok, says = checked(store, head)
    assert not ok and "changed since the head was signed" in says
    redis_client.delete(store.keys.compacted, store.keys.checkpoint)  # the start moved back
    ok, _ = checked(store, head)
    assert not ok


def test_an_edited_checkpoint_is_found_and_never_served(
    redis_client: Redis, workspace: str
) -> None:
    store = compacted_store(redis_client, workspace)
    text = str(redis_client.get(store.keys.checkpoint))
    redis_client.set(store.keys.checkpoint, text.replace('"user"', '"admin"'))
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == store.keys.checkpoint
    assert "changed or replaced since the compaction" in report.broken.why
    with pytest.raises(ChainBroken, match="checkpoint"):
        Replayer(store).as_of(now(store))
    held = Compactor(store, Retention(keep_records=1)).run()
    assert held.trimmed == 0 and held.held_back is not None


def test_a_mark_and_checkpoint_from_another_workspace_are_found(
    redis_client: Redis, workspace: str
) -> None:
    store = compacted_store(redis_client, workspace)
    other = StateStore(redis_client, f"test-{uuid.uuid4().hex[:12]}")
    try:
        commit(other, 10, key="decision.db")
        Compactor(other, Retention(keep_records=4)).run()
        for key in ("compacted", "checkpoint", "checkpoint_at"):
            theirs, ours = getattr(other.keys, key), getattr(store.keys, key)
            redis_client.delete(ours)
            if key == "compacted":
                redis_client.hset(ours, mapping=redis_client.hgetall(theirs))
            else:
                redis_client.set(ours, str(redis_client.get(theirs)))
        report = verify_chain(redis_client, store.keys)
        kept = next(iter(raw_rows(redis_client, store.keys.log)))[0]
        assert report.broken is not None and report.broken.where == kept
    finally:
        delete_workspace(redis_client, other.workspace)


def test_a_head_confirms_the_state_across_a_later_compaction(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    done = commit(store, 10, key="decision.db")
    head = head_of(store)  # record 10, never compacted
    commit(store, 3, key="decision.db")
    assert Compactor(store, Retention(keep_records=6)).run().trimmed == 7
    ok, says = checked(store, head)
    assert ok and "start moved" in says and "rebuilt from the checkpoint" in says
    again = head_of(store)  # signed after: from the same start
    commit(store, 1, key="decision.db")
    ok, says = checked(store, again)
    assert ok and "from the start the head names" in says
    assert done[-1].log_id == head.link.log_id


def test_a_head_of_an_older_release_names_no_start(redis_client: Redis, workspace: str) -> None:
    store = StateStore(redis_client, workspace)
    commit(store, 6, key="decision.db")
    report = verify_chain(redis_client, store.keys)
    assert report.last is not None
    older = Head.from_json(Head(workspace, report.last).signed(KEY).to_json())
    assert older.start is None and older.signature_ok(KEY)
    ok, says = checked(store, older)
    assert ok and "older release" in says
    commit(store, 2, key="decision.db")
    Compactor(store, Retention(keep_records=4)).run()
    ok, says = checked(store, older)
    assert not ok and "names no start" in says and "sign a new head" in says


def test_a_head_names_its_start_and_state_under_its_signature(workspace: str) -> None:
    link = Link("1795649246159-0", 3, "c" * 40)
    signed = Head(workspace, link, start="a" * 40, state="b" * 40, compacted="1-5").signed(KEY)
    again = Head.from_json(signed.to_json())
    assert again == signed and again.signature_ok(KEY)
    for field, forged in (("start", "d" * 40), ("state", "e" * 40), ("compacted", "1-4")):
        text = signed.to_json().replace(str(getattr(signed, field)), forged)
        assert not Head.from_json(text).signature_ok(KEY), field
    stripped = signed.to_json().replace(',"start":"' + "a" * 40 + '"', "")
    with pytest.raises(ValueError, match="start without a state"):
        Head.from_json(stripped)
    older = Head(workspace, link).signed(KEY)  # a v1 head replayed as v2: another message
    assert not Head(workspace, link, older.signature, "a" * 40, "b" * 40).signature_ok(KEY)


def older_release_mark(client: Redis, store: StateStore) -> None:
    """The mark as an older release left it: no first record, no checkpoint SHA-1."""
    client.hdel(store.keys.compacted, "first", "checkpoint")


def test_an_older_release_mark_is_unsealed_until_sealed(
    redis_client: Redis, workspace: str
) -> None:
    store = compacted_store(redis_client, workspace)
    older_release_mark(redis_client, store)
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.unsealed
    with pytest.raises(ChainBroken, match="log seal"):
        Replayer(store).as_of(now(store))
    done = seal(store)
    assert done.done and "now vouches for the checkpoint" in done.says
    assert verify_chain(redis_client, store.keys).ok
    assert Replayer(store).verify()[1] == []
    assert seal(store).says.startswith("nothing to seal")
    commit(store, 3, key="decision.db")
    assert Compactor(store, Retention(keep_records=2)).run().trimmed == 5
    assert verify_chain(redis_client, store.keys).ok


def test_an_older_release_checkpoint_past_its_mark_is_sealed_where_it_is(
    redis_client: Redis, workspace: str
) -> None:
    """An older release's replay saved checkpoints past the mark: sealed as it stands, the
    records it holds stay in the log and replay passes them."""
    store = compacted_store(redis_client, workspace)
    kept = [row[0] for row in raw_rows(redis_client, store.keys.log)]
    older_release_mark(redis_client, store)
    image = Image.from_json(str(redis_client.get(store.keys.checkpoint)))
    for record in MutationLog(redis_client, store.keys).records(after=image.last_id, until=kept[1]):
        apply(image, record)
    redis_client.set(store.keys.checkpoint, image.to_json())
    redis_client.set(store.keys.checkpoint_at, kept[1])
    assert verify_chain(redis_client, store.keys).broken is not None
    assert seal(store).done
    assert verify_chain(redis_client, store.keys).ok
    with pytest.raises(BeforeHistory):
        Replayer(store).as_of(Moment.at_record(kept[0]))
    assert Replayer(store).as_of(Moment.at_record(kept[2])).last_id == kept[2]
    assert Replayer(store).verify()[1] == []
    commit(store, 4, key="decision.db")
    assert Compactor(store, Retention(keep_records=2)).run().trimmed == 6
    assert Replayer(store).verify()[1] == []
    assert verify_chain(redis_client, store.keys).ok


def legacy(client: Redis, store: StateStore, n: int) -> list[str]:
    """``n`` records as a release older than the chain wrote them (committed, then their
    links taken off and the chain's head with them), then three chained commits."""
    done = commit(store, n, key="k.old")

    def strip(rows: Rows) -> Rows:
        return [(i, {k: v for k, v in f.items() if k != b"chain"}) for i, f in rows]

    rewrite(client, store, strip)
    client.delete(store.keys.chain)
    return [d.log_id for d in done]


def test_records_older_than_the_chain_are_a_break_until_sealed(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    old = legacy(redis_client, store, 2)
    report = verify_chain(redis_client, store.keys)
    assert report.ok and report.unchained == 2 and report.last is None  # nothing chained
    chained = commit(store, 3, key="decision.db")
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == old[0]
    assert "nor do the 1 other record(s)" in report.broken.why and "log seal" in report.broken.why
    assert report.first is not None and report.first.log_id == chained[0].log_id
    with pytest.raises(ChainBroken):
        Replayer(store).as_of(now(store))
    done = seal(store)
    assert done.done and "the 2 record(s) written before the log was chained" in done.says
    report = verify_chain(redis_client, store.keys)
    assert report.ok, report.broken
    assert "none of them chained" in report.start() and report.origin.mark is not None
    assert report.origin.mark.records == 2 and report.origin.mark.first == old[0]
    image = Replayer(store).as_of(now(store))
    assert image.entries["k.old"].version == 2 and image.entries["decision.db"].version == 3
    assert Replayer(store).verify()[1] == []
    plant(redis_client, store, "1-0")  # sealed: nothing unchained may come first again
    assert verify_chain(redis_client, store.keys).broken is not None
    assert not seal(store).done


def test_a_record_planted_before_the_chain_is_never_sealed(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    commit(store, 3, key="decision.db")
    plant(redis_client, store, "1-0")
    refused = seal(store)
    assert not refused.done and "does not rebuild the live state" in refused.says
    assert "decision.owner" in refused.says
    assert not redis_client.exists(store.keys.compacted)
    assert verify_chain(redis_client, store.keys).broken is not None
    committed = store.commit(mutation("set", "decision.db", "x"))
    assert isinstance(committed, Committed)


def test_a_record_planted_before_a_compacted_start_is_a_break(
    redis_client: Redis, workspace: str
) -> None:
    store = compacted_store(redis_client, workspace)
    plant(redis_client, store, "1-0")
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == "1-0"
    assert "lies at or before" in report.broken.why
    with pytest.raises(ChainBroken, match="1-0"):
        Replayer(store).as_of(now(store))
    held = Compactor(store, Retention(keep_records=1)).run()
    assert held.trimmed == 0 and held.held_back is not None and "1-0" in held.held_back


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(batch=st.lists(mutations(), min_size=1, max_size=12), data=st.data())
def test_a_record_with_no_hash_anywhere_is_named_and_never_replayed(
    redis_client: Redis, workspace: str, batch: list[Mutation], data: st.DataObject
) -> None:
    """Any history, a record with no hash put at any place in it (before record 1, between
    two records, after the head; the log's ids renumbered 1-0, 2-0, ... to make room, and
    the head key with them): verify names it, and no replay that reads it answers."""
    delete_workspace(redis_client, workspace)
    store = StateStore(redis_client, workspace)
    committed = [o for m in batch if isinstance(o := store.commit(m), Committed)]
    if not committed:
        return
    at = data.draw(st.integers(0, len(committed)))
    forged = mutation("set", "decision.owner", "mallory", "admin:boss")
    planted = {b"mutation": forged.to_json().encode(), b"version": b"1", b"ts": b"1"}

    def renumbered(rows: Rows) -> Rows:
        fields = [f for _, f in rows]
        fields.insert(at, planted)
        return [(f"{n}-0", f) for n, f in enumerate(fields, 1)]

    rewrite(redis_client, store, renumbered)
    last = len(committed) + (1 if at < len(committed) else 0)  # the head's record, renumbered
    redis_client.hset(store.keys.chain, "id", f"{last}-0")
    broken = verify_chain(redis_client, store.keys).broken
    assert broken is not None and broken.where == f"{at + 1}-0", broken
    with pytest.raises(ChainBroken, match=f"{at + 1}-0"):
        Replayer(store).as_of(Moment.at_time(10_000))


def test_a_checkpoint_said_to_reach_further_than_it_does_is_found(
    redis_client: Redis, workspace: str
) -> None:
    store = compacted_store(redis_client, workspace)
    kept = next(iter(raw_rows(redis_client, store.keys.log)))[0]
    redis_client.set(store.keys.checkpoint_at, kept)  # past the mark: allowed, if the image is
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == store.keys.checkpoint
    assert "its image reaches" in report.broken.why and kept in report.broken.why
    with pytest.raises(ChainBroken):
        Replayer(store).as_of(now(store))


def test_a_checkpoint_no_mark_vouches_for_is_never_read(
    redis_client: Redis, workspace: str
) -> None:
    """A checkpoint with no compaction mark (an older release's replay saved one, or it was
    planted) is not where the chain starts: as-of answers and compaction rebuild from the
    log's first record, and what it planted is nowhere."""
    store = StateStore(redis_client, workspace)
    done = commit(store, 4, key="decision.db")
    planted = Replayer(store).rebuild(until=done[1].log_id)
    planted.entries["decision.owner"] = planted.entries["decision.db"].model_copy(
        update={"key": "decision.owner", "value": "mallory"}
    )
    redis_client.set(store.keys.checkpoint, planted.to_json())
    redis_client.set(store.keys.checkpoint_at, done[1].log_id)
    assert verify_chain(redis_client, store.keys).ok
    replayer = Replayer(store)
    image = replayer.as_of(now(store))
    assert "decision.owner" not in image.entries and replayer.started_after is None
    assert Compactor(store, Retention(keep_records=1)).run().trimmed == 3
    _, checkpoint = vouched_base(redis_client, store.keys)
    assert checkpoint is not None and "decision.owner" not in checkpoint.entries
    assert Replayer(store).verify()[1] == []
