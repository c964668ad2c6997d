"""A refused apply racing a successful one: the proposal ends applied exactly when its
mutation committed, never back to pending after a commit. Driven deterministically (the
refused applier held at a point of its own, on a real Redis client) and by real threads."""

from __future__ import annotations

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
"""


@pytest.fixture
def guarded(tmp_path: Path) -> Path:
    return write_config(tmp_path, GUARDED)


def propose_protected(app: App, key: str) -> str:
    pending = app.gateway.propose(mutation("set", key, "off", "agent:llm"))
    assert isinstance(pending, Pending)
    return pending.proposal.id


def assert_consistent(app: App, pid: str, key: str) -> None:
    """Applied exactly when committed; pending otherwise."""
    proposal = app.gateway.proposals.get(pid)
    assert proposal is not None
    committed = app.store.get(key) is not None
    expected = ProposalStatus.APPLIED if committed else ProposalStatus.PENDING
    assert proposal.status is expected, (proposal.status, committed)
    assert len(app.log.latest(10, key=key)) == (1 if committed else 0)


def test_a_refused_apply_held_after_its_claim_never_undoes_a_commit(
    guarded: Path, redis_client: Redis, workspace: str
) -> None:
    """Alice (a member) claims the proposal and is refused (protected); she is held just as
    she records her refusal, before she hands the proposal back. Meanwhile Mo, a
    moderator, applies it."""
    app = build_app(workspace, guarded, client=redis_client)
    held = HeldRedis("XADD", connection_pool=redis_client.connection_pool)
    alices = build_app(workspace, guarded, client=held)
    pid = propose_protected(app, "guarded.one")
    results: dict[str, Outcome] = {}
    held.armed = True
    alice = threading.Thread(
        target=lambda: results.update(alice=alices.gateway.apply_proposal(pid, actor("user:al")))
    )
    alice.start()
    assert held.held.wait(10)
    mo = app.gateway.apply_proposal(pid, actor("moderator:mo"))
    held.release.set()
    alice.join(10)
    refused = results["alice"]
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.PROTECTED
    assert_consistent(app, pid, "guarded.one")
    if isinstance(mo, Rejected):  # told to try again: Alice held the proposal then
        assert mo.reason is RejectReason.CONFLICT and "user:al" in mo.message
        assert isinstance(app.gateway.apply_proposal(pid, actor("moderator:mo")), Committed)
    assert_consistent(app, pid, "guarded.one")
    assert app.gateway.proposals.get(pid).status is ProposalStatus.APPLIED  # type: ignore[union-attr]


def test_refused_and_allowed_applies_racing_leave_status_and_state_agreeing(
    guarded: Path, redis_client: Redis, workspace: str
) -> None:
    """Two members (refused: the key is protected) and a moderator apply at once, in
    threads, round after round."""
    app = build_app(workspace, guarded, client=redis_client)
    for round_ in range(40):
        key = f"guarded.k{round_}"
        pid = propose_protected(app, key)
        start = threading.Barrier(3)
        outcomes: list[Outcome] = []

        def apply(who: str, pid: str = pid, start: Any = start, out: Any = outcomes) -> None:
            start.wait()
            out.append(app.gateway.apply_proposal(pid, actor(who)))

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
    guarded: Path, redis_client: Redis, workspace: str
) -> None:
    app = build_app(workspace, guarded, client=redis_client)
    pid = propose_protected(app, "guarded.stuck")
    box = app.gateway.proposals
    claimed = box.transition(pid, ProposalStatus.PENDING, ProposalStatus.APPLIED, actor("user:al"))
    assert claimed is not None  # ... and Al's process stopped here, before its commit
    busy = app.gateway.apply_proposal(pid, actor("moderator:mo"))
    assert isinstance(busy, Rejected) and busy.reason is RejectReason.CONFLICT
    assert "user:al is applying this proposal right now" in busy.message
    long_ago = claimed.model_copy(update={"resolved_at": claimed.resolved_at - CLAIM_LEASE_MS - 1})  # type: ignore[operator]
    redis_client.set(app.store.keys.proposal(pid), long_ago.model_dump_json(by_alias=True))
    applied = app.gateway.apply_proposal(pid, actor("moderator:mo"))
    assert isinstance(applied, Committed) and not applied.duplicate
    final = box.get(pid)
    assert final is not None and final.status is ProposalStatus.APPLIED
    assert final.resolved_by == actor("moderator:mo")
