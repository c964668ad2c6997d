"""``deliberate log verify`` and ``deliberate log head``, as an operator types them; and
``deliberate log`` itself as it was."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from core.state.chain.links import genesis
from core.state.chain.verify import raw_rows
from core.state.commit_result import Committed
from tests.bot.cli.process import run
from tests.conftest import delete_workspace
from tests.core.state.test_chain import Rows, rechain, rewrite
from tests.factories import mutation


def commit(app: App, n: int) -> list[Committed]:
    done = []
    for i in range(n):
        outcome = app.store.commit(mutation("set", "decision.db", f"v{i}"))
        assert isinstance(outcome, Committed)
        done.append(outcome)
    return done


def test_verify_and_log_as_before(capsys: pytest.CaptureFixture[str], app: App) -> None:
    done = commit(app, 4)
    code, out, _ = run(capsys, app.store.workspace, "log", "verify")
    assert code == 0
    assert out.splitlines() == [
        f"checked 4 records: the chain starts at record 1 ({done[0].log_id})",
        f"OK: the chain holds through record 4 ({done[-1].log_id}) "
        + app.redis.hget(app.store.keys.chain, "hash"),
    ]
    code, out, _ = run(capsys, app.store.workspace, "log", "--key", "decision.db", "--limit", "2")
    assert code == 0 and len(out.splitlines()) == 2 and '"v3"' in out


def test_verify_names_the_record_changed_in_redis(
    capsys: pytest.CaptureFixture[str], app: App, redis_client: Redis
) -> None:
    done = commit(app, 5)
    rows = list(raw_rows(redis_client, app.store.keys.log))
    redis_client.delete(app.store.keys.log)
    for log_id, fields in rows:
        if log_id == done[1].log_id:
            fields = {**fields, b"mutation": fields[b"mutation"].replace(b'"v1"', b'"v9"')}
        redis_client.xadd(app.store.keys.log, fields, id=log_id)  # type: ignore[arg-type]
    code, out, _ = run(capsys, app.store.workspace, "log", "verify")
    assert code == 1
    assert f"BROKEN at {done[1].log_id}: record 2: its hash does not match" in out
    code, _, err = run(capsys, app.store.workspace, "log", "head")
    assert code == 1 and "nothing signed" in err


def test_head_signed_then_verified_and_a_forged_one_refused(
    capsys: pytest.CaptureFixture[str],
    app: App,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    ws = app.store.workspace
    commit(app, 3)
    code, unsigned, err = run(capsys, ws, "log", "head")
    assert code == 0 and "DELIBERATE_LOG_SIGNING_KEY is not set" in err
    assert '"count":3' in unsigned and "sig" not in unsigned
    monkeypatch.setenv("DELIBERATE_LOG_SIGNING_KEY", "s3cret")
    code, signed, err = run(capsys, ws, "log", "head")
    assert code == 0 and err == "" and '"alg":"HMAC-SHA256"' in signed
    saved = tmp_path / "head.json"
    saved.write_text(signed)
    commit(app, 2)
    code, out, _ = run(capsys, ws, "log", "verify", "--head", str(saved))
    assert code == 0 and out.splitlines()[-1].startswith("head OK: record 3 (")
    forged = signed.replace('"count":3', '"count":4')
    code, out, _ = run(capsys, ws, "log", "verify", "--head", forged)
    assert code == 1 and "head REFUSED" in out and "forged or altered" in out
    code, out, _ = run(capsys, ws, "log", "verify", "--head", unsigned)
    assert code == 1 and "is not signed" in out
    monkeypatch.setenv("DELIBERATE_LOG_SIGNING_KEY", "another")
    code, out, _ = run(capsys, ws, "log", "verify", "--head", str(saved))
    assert code == 1 and "head REFUSED" in out
    monkeypatch.delenv("DELIBERATE_LOG_SIGNING_KEY")
    code, _, err = run(capsys, ws, "log", "verify", "--head", str(saved))
    assert code == 2 and "cannot be checked" in err
    code, _, err = run(capsys, ws, "log", "verify", "--head", "{not json")
    assert code == 2 and "--head" in err


def test_a_log_stripped_of_its_chain_is_unverified_not_ok(
    capsys: pytest.CaptureFixture[str], app: App, redis_client: Redis
) -> None:
    """Whoever can write Redis can take every link off (and the head with them): the log then
    holds records nothing vouches for, which is neither OK nor a break: exit 3."""
    done = commit(app, 3)
    rows = list(raw_rows(redis_client, app.store.keys.log))
    redis_client.delete(app.store.keys.log, app.store.keys.chain)
    for log_id, fields in rows:
        kept = {k: v for k, v in fields.items() if k != b"chain"}
        if log_id == done[1].log_id:
            kept[b"mutation"] = kept[b"mutation"].replace(b'"v1"', b'"HACKED"')
        redis_client.xadd(app.store.keys.log, kept, id=log_id)  # type: ignore[arg-type]
    code, out, _ = run(capsys, app.store.workspace, "log", "verify")
    assert code == 3 and "UNVERIFIED: no record carries a link of the chain (3 held)" in out
    assert "OK" not in out


def test_a_head_replayed_after_a_rewrite_or_from_another_workspace_is_refused(
    capsys: pytest.CaptureFixture[str],
    app: App,
    redis_client: Redis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two replays of a genuine, well-signed head: into another workspace's verify (same
    key, its own log as long), and into this one's after a forger rewrote a record before
    it and recomputed every link and the chain's head key. Both exit 1, head REFUSED."""
    monkeypatch.setenv("DELIBERATE_LOG_SIGNING_KEY", "s3cret")
    ws, other = app.store.workspace, f"test-{uuid.uuid4().hex[:12]}"
    try:
        done = commit(app, 4)
        commit(build_app(other, client=redis_client), 4)
        code, signed, _ = run(capsys, ws, "log", "head")
        assert code == 0 and '"count":4' in signed
        code, out, _ = run(capsys, other, "log", "verify", "--head", signed)
        assert code == 1 and f"head REFUSED: the head is of workspace {ws!r}" in out
        target = done[1].log_id

        def forge(rows: Rows) -> Rows:
            edited = [
                (
                    i,
                    {**f, b"mutation": f[b"mutation"].replace(b'"v1"', b'"v9"')}
                    if i == target
                    else f,
                )
                for i, f in rows
            ]
            return rechain(edited, genesis(app.store.keys.log), start=1)

        rewrite(redis_client, app.store, forge)
        last_id, fields = list(raw_rows(redis_client, app.store.keys.log))[-1]
        n, _, h = fields[b"chain"].decode().partition(":")
        redis_client.hset(app.store.keys.chain, mapping={"n": n, "hash": h, "id": last_id})
        code, out, _ = run(capsys, ws, "log", "verify")
        assert code == 0  # the chain in Redis holds: only the anchored head tells
        code, out, _ = run(capsys, ws, "log", "verify", "--head", signed)
        assert code == 1 and "head REFUSED" in out and "rewritten" in out
    finally:
        delete_workspace(redis_client, other)


def plant_first(app: App, redis_client: Redis) -> None:
    """The issue's plant: an admin's write nobody made, as an unchained record at 1-0."""
    forged = mutation("set", "decision.owner", "mallory", "admin:boss")
    fields = {
        b"mutation": forged.to_json().encode(),
        b"version": b"1",
        b"ts": b"1",
        b"expiresAt": b"",
        b"prev": b"",
    }
    rewrite(redis_client, app.store, lambda rows: [("1-0", fields), *rows])


def test_a_record_planted_at_1_0_is_broken_and_never_served(
    capsys: pytest.CaptureFixture[str],
    app: App,
    redis_client: Redis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The issue's reproduction: a record with no hash added at 1-0 passed 'log verify' and
    'verify --head', and 'state get --at' answered its value."""
    monkeypatch.setenv("DELIBERATE_LOG_SIGNING_KEY", "s3cret")
    ws = app.store.workspace
    done = commit(app, 3)
    code, signed, _ = run(capsys, ws, "log", "head")
    assert code == 0
    plant_first(app, redis_client)
    code, out, _ = run(capsys, ws, "log", "verify")
    assert code == 1 and "BROKEN at 1-0: carries no chain hash and comes before" in out
    assert not any(line.startswith("OK") for line in out.splitlines())
    code, out, _ = run(capsys, ws, "log", "verify", "--head", signed)
    assert code == 1 and "head REFUSED" in out and "head OK" not in out
    code, out, err = run(capsys, ws, "state", "get", "decision.owner", "--at", done[-1].log_id)
    assert code == 1 and "mallory" not in out + err
    assert "does not verify at 1-0" in err
    code, out, err = run(capsys, ws, "replay", "--verify")
    assert code == 1 and "does not verify at 1-0" in err and "OK" not in out
    code, out, err = run(capsys, ws, "log", "seal")  # the live state does not bear it out
    assert code == 1 and "does not rebuild the live state" in out and "decision.owner" in out
    code, _, err = run(capsys, ws, "log", "head")
    assert code == 1 and "nothing signed" in err


def test_the_first_records_deleted_under_a_forged_mark_are_not_ok(
    capsys: pytest.CaptureFixture[str],
    app: App,
    redis_client: Redis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Deleting the first records and writing the mark an older release wrote (the last
    link kept) verified: now the mark must vouch for a checkpoint, and this one vouches for
    none."""
    monkeypatch.setenv("DELIBERATE_LOG_SIGNING_KEY", "s3cret")
    ws, keys = app.store.workspace, app.store.keys
    done = commit(app, 6)
    code, signed, _ = run(capsys, ws, "log", "head")
    third = list(raw_rows(redis_client, keys.log))[2][1][b"chain"].decode()
    redis_client.xtrim(keys.log, minid=done[3].log_id, approximate=False)
    redis_client.hset(
        keys.compacted, mapping={"through": done[2].log_id, "records": 3, "at": 1, "chain": third}
    )
    code, out, _ = run(capsys, ws, "log", "verify")
    assert code == 3 and f"UNSEALED at {keys.compacted}" in out
    assert not any(line.startswith("OK") for line in out.splitlines())
    code, out, _ = run(capsys, ws, "log", "verify", "--head", signed)
    assert code == 1 and "head REFUSED: the log's start is not vouched for" in out
    code, _, err = run(capsys, ws, "state", "get", "decision.db", "--at", done[-1].log_id)
    assert code == 1 and "is not vouched for" in err
    code, out, _ = run(capsys, ws, "log", "seal")
    assert code == 1 and "checkpoint is missing" in out


def test_records_older_than_the_chain_are_sealed_once(
    capsys: pytest.CaptureFixture[str], app: App, redis_client: Redis
) -> None:
    ws, keys = app.store.workspace, app.store.keys
    older = commit(app, 2)

    def strip(rows: Rows) -> Rows:  # as a release older than the chain wrote them
        return [(i, {k: v for k, v in f.items() if k != b"chain"}) for i, f in rows]

    rewrite(redis_client, app.store, strip)
    redis_client.delete(keys.chain)
    done = commit(app, 2)
    code, out, _ = run(capsys, ws, "log", "verify")
    assert code == 1 and f"BROKEN at {older[0].log_id}" in out and "log seal" in out
    code, out, _ = run(capsys, ws, "log", "seal")
    assert code == 0
    assert out.splitlines() == [
        f"sealed: the 2 record(s) written before the log was chained (through "
        f"{older[1].log_id}) were compacted into the checkpoint, checked against the live "
        "state, which the compaction mark now vouches for"
    ]
    code, out, _ = run(capsys, ws, "log", "verify")
    assert code == 0 and f"the chain continues from {older[1].log_id}" in out
    assert f"OK: the chain holds through record 2 ({done[-1].log_id})" in out
    code, out, _ = run(capsys, ws, "state", "get", "decision.db", "--at", done[-1].log_id)
    assert code == 0 and '"v1"' in out
    code, out, _ = run(capsys, ws, "log", "seal")
    assert code == 0 and out.startswith("nothing to seal")
    code, signed, _ = run(capsys, ws, "log", "head")
    assert code == 0 and f'"compacted":"{older[1].log_id}"' in signed
    assert '"start":"' in signed and '"state":"' in signed
