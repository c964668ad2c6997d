"""A refused apply racing a successful one: the proposal ends applied exactly when its
mutation committed, never back to pending after a commit. Driven deterministically (the
refused applier held at a point of its own, on a real Redis client) and by real threads.
And an applied proposal outliving its mutation's idempotency record: never committed again,
never handed back."""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from core.gateway.outcome import Outcome, Pending, ProposalStatus
from core.gateway.proposals import CLAIM_LEASE_MS
from core.state.commit_result import Committed, Rejected, RejectReason
from tests.conftest import write_config
from tests.factories import actor, mutation


class HeldRedis(Redis):
    """A real client that, once armed, stops at its first ``hold_at`` command until
    released."""

    def __init__(self, hold_at: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.hold_at = hold_at
        self.armed = False
        self.held, self.release = threading.Event(), threading.Event()

    def execute_command(self, *args: Any, **options: Any) -> Any:
        if self.armed and str(args[0]).upper() == self.hold_at:
            self.armed = False
            self.held.set()
            assert self.release.wait(10), "never released"
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


GUARDED = """
policy:
  keys:
    - pattern: "guarded.*"
      protected: true
    - pattern: "limited.*"
      rate_limit: {max: 1, per_sec: 3600}
"""


@pytest.fixture
def guarded(tmp_path: Path) -> Path:
    return write_config(tmp_path, GUARDED)


def propose_protected(app: App, key: str) -> str:
    pending = app.gateway.propose(mutation("set", key, "off", "agent:llm"))
    assert isinstance(pending, Pending)
    return pending.proposal.id


def propose_after(app: App, key: str, who: str) -> str:
    """A proposal for a rate-limited key ``who`` has just written: their roles let them
    apply it, and the commit script refuses them (their one write an hour is used up), after
    their claim."""
    assert isinstance(app.gateway.propose(mutation("set", key, "on", who)), Committed)
    return propose_protected(app, key)


def assert_consistent(app: App, pid: str, key: str, before: int = 0) -> None:
    """Applied exactly when committed; pending otherwise (``before``: records of the key
    the proposal was made after)."""
    proposal = app.gateway.proposals.get(pid)
    assert proposal is not None
    committed = app.store.version(key) > before
    expected = ProposalStatus.APPLIED if committed else ProposalStatus.PENDING
    assert proposal.status is expected, (proposal.status, committed)
    assert len(app.log.latest(10, key=key)) == before + (1 if committed else 0)


def test_a_refused_apply_held_after_its_claim_never_undoes_a_commit(
    guarded: Path, server_redis: Redis, workspace: str
) -> None:
    """Alice claims the proposal and is refused (rate-limited, by the commit script); she is
    held just as she records her refusal, before she hands the proposal back. Meanwhile Mo
    applies it."""
    app = build_app(workspace, guarded, client=server_redis)
    held = HeldRedis("XADD", connection_pool=server_redis.connection_pool)
    alices = build_app(workspace, guarded, client=held)
    pid = propose_after(app, "limited.one", "user:al")
    results: dict[str, Outcome] = {}
    held.armed = True
    alice = threading.Thread(
        target=lambda: results.update(
            alice=alices.gateway.apply_proposal(pid, actor("user:al"), revision=0)
        )
    )
    alice.start()
    assert held.held.wait(10)
    mo = app.gateway.apply_proposal(pid, actor("moderator:mo"), revision=0)
    held.release.set()
    alice.join(10)
    refused = results["alice"]
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.RATE_LIMITED
    # told to try again: Alice held the proposal when Mo clicked, and handed it back since
    assert isinstance(mo, Rejected) and mo.reason is RejectReason.CONFLICT
    assert "user:al is applying this proposal right now" in mo.message
    assert_consistent(app, pid, "limited.one", before=1)
    assert isinstance(app.gateway.apply_proposal(pid, actor("moderator:mo"), revision=0), Committed)
    assert_consistent(app, pid, "limited.one", before=1)
    assert app.gateway.proposals.get(pid).status is ProposalStatus.APPLIED  # type: ignore[union-attr]


def test_refused_and_allowed_applies_racing_leave_status_and_state_agreeing(
    guarded: Path, server_redis: Redis, workspace: str
) -> None:
    """Two members (refused: the key is protected) and a moderator apply at once, in
    threads, round after round."""
    app = build_app(workspace, guarded, client=server_redis)
    for round_ in range(40):
        key = f"guarded.k{round_}"
        pid = propose_protected(app, key)
        start = threading.Barrier(3)
        outcomes: list[Outcome] = []

        def apply(who: str, pid: str = pid, start: Any = start, out: Any = outcomes) -> None:
            start.wait()
            out.append(app.gateway.apply_proposal(pid, actor(who), revision=0))

        threads = [
            threading.Thread(target=apply, args=(who,))
            for who in ("user:al", "user:bo", "moderator:mo")
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert len(outcomes) == 3, f"round {round_}"
        proposal = app.gateway.proposals.get(pid)
        assert proposal is not None
        committed = app.store.get(key) is not None
        expected = ProposalStatus.APPLIED if committed else ProposalStatus.PENDING
        assert proposal.status is expected, f"round {round_}: {proposal.status}, {committed}"
        fresh = [o for o in outcomes if isinstance(o, Committed) and not o.duplicate]
        assert len(fresh) == (1 if committed else 0), f"round {round_}"


def test_a_claim_whose_applier_stopped_midway_is_taken_over_after_the_lease(
    guarded: Path, server_redis: Redis, workspace: str
) -> None:
    app = build_app(workspace, guarded, client=server_redis)
    pid = propose_protected(app, "guarded.stuck")
    box = app.gateway.proposals
    approved = box.approve(pid, actor("user:al"), revision=0)
    assert approved is not None  # ... and Al's process stopped here, before its commit
    claimed = approved.proposal
    assert claimed.status is ProposalStatus.APPLIED
    busy = app.gateway.apply_proposal(pid, actor("moderator:mo"), revision=0)
    assert isinstance(busy, Rejected) and busy.reason is RejectReason.CONFLICT
    assert "user:al is applying this proposal right now" in busy.message
    long_ago = claimed.model_copy(update={"resolved_at": claimed.resolved_at - CLAIM_LEASE_MS - 1})  # type: ignore[operator]
    server_redis.set(app.store.keys.proposal(pid), long_ago.model_dump_json(by_alias=True))
    applied = app.gateway.apply_proposal(pid, actor("moderator:mo"), revision=0)
    assert isinstance(applied, Committed) and not applied.duplicate
    final = box.get(pid)
    assert final is not None and final.status is ProposalStatus.APPLIED
    assert final.resolved_by == actor("moderator:mo")


# An applied proposal is kept 7 days, its mutation's idempotency record only
# ``store.idempotency_ttl_sec`` (60 s at the least): once that record is gone, a click must
# neither commit the proposal again nor hand it back to pending.

SHORT_MEMORY = (
    GUARDED
    + """
store:
  idempotency_ttl_sec: 60
  commit_retry_sec: 20  # under half of it (the shipped 30 is not)
"""
)


@pytest.fixture
def forgetful(tmp_path: Path, server_redis: Redis, workspace: str) -> App:
    return build_app(workspace, write_config(tmp_path, SHORT_MEMORY), client=server_redis)


def forget_idempotency(app: App, pid: str) -> None:
    """What the record's expiry does, without waiting for it."""
    assert app.redis.delete(app.store.keys.idempotency(f"apply-{pid}")) == 1


def claimed_ago(app: App, pid: str, ms: int) -> None:
    """The proposal as if its claim (or commit) were ``ms`` older."""
    proposal = app.gateway.proposals.get(pid)
    assert proposal is not None and proposal.resolved_at is not None
    older = proposal.model_copy(update={"resolved_at": proposal.resolved_at - ms})
    app.redis.set(app.store.keys.proposal(pid), older.model_dump_json(by_alias=True))


def assert_applied_once(app: App, pid: str, key: str, first: Committed, before: int = 0) -> None:
    """``before``: records of the key the proposal was made after."""
    proposal = app.gateway.proposals.get(pid)
    assert proposal is not None and proposal.status is ProposalStatus.APPLIED
    assert app.store.version(key) == first.version == before + 1
    assert [r.log_id for r in app.log.latest(10, key=key)][before:] == [first.log_id]


def test_an_applied_proposal_is_not_committed_again_once_its_record_expired(
    forgetful: App,
) -> None:
    app = forgetful
    pid = propose_protected(app, "guarded.once")
    first = app.gateway.apply_proposal(pid, actor("moderator:mo"), revision=0)
    assert isinstance(first, Committed) and not first.duplicate
    forget_idempotency(app, pid)
    claimed_ago(app, pid, 2 * app.store.idempotency_ttl_ms)
    again = app.gateway.apply_proposal(pid, actor("moderator:max"), revision=0)
    assert isinstance(again, Committed) and again.duplicate
    assert (again.version, again.log_id) == (first.version, first.log_id)
    assert again.mutation.actor == actor("moderator:mo")  # the first applier, as before
    assert again.entry is not None and again.entry.value == "off"
    assert_applied_once(app, pid, "guarded.once", first)


def test_a_refused_click_never_hands_back_a_proposal_whose_record_expired(
    forgetful: App,
) -> None:
    app = forgetful
    pid = propose_protected(app, "guarded.back")
    first = app.gateway.apply_proposal(pid, actor("moderator:mo"), revision=0)
    assert isinstance(first, Committed)
    forget_idempotency(app, pid)
    claimed_ago(app, pid, CLAIM_LEASE_MS + 1)
    refused = app.gateway.apply_proposal(pid, actor("user:al"), revision=0)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.PROTECTED
    assert_applied_once(app, pid, "guarded.back", first)
    again = app.gateway.apply_proposal(pid, actor("moderator:mo"), revision=0)
    assert isinstance(again, Committed) and again.duplicate and again.log_id == first.log_id
    assert_applied_once(app, pid, "guarded.back", first)


class StoppingRedis(Redis):
    """A real client that, once armed, fails whatever it is asked right after its next
    script call (the commit): its process stopped there."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.armed = self.committed = False

    def _next(self, command: str) -> None:
        if self.armed and self.committed:
            self.armed = False
            raise ConnectionError(f"stopped before {command}")
        if self.armed and command == "EVALSHA":
            self.committed = True

    def execute_command(self, *args: Any, **options: Any) -> Any:
        self._next(str(args[0]).upper())
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Any:
        self._next("a pipeline")
        return super().pipeline(transaction, shard_hint)


def test_an_applier_that_stopped_right_after_its_commit_is_not_committed_over(
    forgetful: App, server_redis: Redis, guarded: Path, workspace: str
) -> None:
    """Al's process commits, then stops before anything else (its decision record, the
    proposal's): the next click finds the commit on record and writes it into the proposal,
    which then outlives the record."""
    app = forgetful
    stopping = StoppingRedis(connection_pool=server_redis.connection_pool)
    als = build_app(workspace, guarded, client=stopping)
    pid = propose_protected(app, "guarded.stop")
    stopping.armed = True
    with contextlib.suppress(ConnectionError):  # (nothing to stop if the commit is the end)
        als.gateway.apply_proposal(pid, actor("moderator:al"), revision=0)
    assert stopping.committed and app.store.version("guarded.stop") == 1
    claimed_ago(app, pid, CLAIM_LEASE_MS + 1)
    found = app.gateway.apply_proposal(pid, actor("moderator:mo"), revision=0)
    assert isinstance(found, Committed) and found.duplicate
    assert found.mutation.actor == actor("moderator:al")
    forget_idempotency(app, pid)
    again = app.gateway.apply_proposal(pid, actor("moderator:mo"), revision=0)
    assert isinstance(again, Committed) and again.duplicate and again.log_id == found.log_id
    assert_applied_once(app, pid, "guarded.stop", found)


def test_a_claim_older_than_the_idempotency_window_is_never_taken_over(forgetful: App) -> None:
    """Al claimed it and stopped, before or after his commit: after the record's window that
    can no longer be told, so nobody commits it (at most once), and it stays applied."""
    app = forgetful
    pid = propose_protected(app, "guarded.old")
    box = app.gateway.proposals
    assert box.approve(pid, actor("user:al"), revision=0) is not None
    claimed_ago(app, pid, app.store.idempotency_ttl_ms + 1)
    late = app.gateway.apply_proposal(pid, actor("moderator:mo"), revision=0)
    assert isinstance(late, Rejected) and late.reason is RejectReason.NOT_FOUND
    assert "user:al" in late.message and "no longer" in late.message
    assert app.store.version("guarded.old") == 0
    assert box.get(pid).status is ProposalStatus.APPLIED  # type: ignore[union-attr]


def test_a_proposal_applied_before_claims_were_timed_counts_as_applied(forgetful: App) -> None:
    """Stored by an earlier version: applied, with neither a claim time nor a commit in it,
    and its record long gone."""
    app = forgetful
    pid = propose_protected(app, "guarded.legacy")
    stored = app.redis.get(app.store.keys.proposal(pid))
    data = json.loads(str(stored))
    data.update(status="applied", resolvedBy=actor("moderator:mo").model_dump(mode="json"))
    assert "resolvedAt" not in data or data.pop("resolvedAt") is None
    data.pop("committed", None)
    app.redis.set(app.store.keys.proposal(pid), json.dumps(data))
    for who in ("moderator:max", "user:al"):
        late = app.gateway.apply_proposal(pid, actor(who), revision=0)
        assert isinstance(late, Rejected), who
        assert app.store.version("guarded.legacy") == 0
        assert app.gateway.proposals.get(pid).status is ProposalStatus.APPLIED  # type: ignore[union-attr]


def test_a_commit_after_its_claim_was_taken_over_and_handed_back_still_counts(
    forgetful: App, server_redis: Redis, guarded: Path, workspace: str
) -> None:
    """Mo's process claims, then stalls just before its commit, past the lease: Al takes the
    claim over, is refused (rate-limited, after his claim) and hands the proposal back to
    pending. Then Mo's commit lands: the proposal is applied, with Mo's commit in it."""
    app = forgetful
    held = HeldRedis("EVALSHA", connection_pool=server_redis.connection_pool)
    mos = build_app(workspace, guarded, client=held)
    pid = propose_after(app, "limited.late", "user:al")
    results: dict[str, Outcome] = {}
    held.armed = True
    mo = threading.Thread(
        target=lambda: results.update(
            mo=mos.gateway.apply_proposal(pid, actor("moderator:mo"), revision=0)
        )
    )
    mo.start()
    assert held.held.wait(10)
    claimed_ago(app, pid, CLAIM_LEASE_MS + 1)
    refused = app.gateway.apply_proposal(pid, actor("user:al"), revision=0)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.RATE_LIMITED
    assert app.gateway.proposals.get(pid).status is ProposalStatus.PENDING  # type: ignore[union-attr]
    held.release.set()
    mo.join(10)
    first = results["mo"]
    assert isinstance(first, Committed) and not first.duplicate
    assert_applied_once(app, pid, "limited.late", first, before=1)
    forget_idempotency(app, pid)
    again = app.gateway.apply_proposal(pid, actor("moderator:max"), revision=0)
    assert isinstance(again, Committed) and again.duplicate and again.log_id == first.log_id
    assert_applied_once(app, pid, "limited.late", first, before=1)
