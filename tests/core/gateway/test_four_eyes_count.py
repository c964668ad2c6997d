"""Four eyes where the approval is counted: ``ProposalBox.approve``, ``claim`` and
``take_over`` check the proposal as they read it inside their move (under WATCH), whatever a
copy read before said; and every approval names the revision its approver saw: one that
names none is refused at the gateway and by break-glass, recorded, and changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from core.gateway.approving import Barred
from core.gateway.break_glass import BreakGlass
from core.gateway.edits import Edit
from core.gateway.outcome import Pending, Proposal, ProposalStatus
from core.gateway.proposals import CLAIM_LEASE_MS
from core.state.commit_result import Committed, Rejected, RejectReason
from tests.conftest import write_config
from tests.factories import actor, mutation

CONFIG = """
policy:
  break_glass: {role: oncall}
  keys:
    - pattern: "eyes.*"
      type: string
      approval: {people: true, four_eyes: true}
"""
AL, BO, CY = actor("user:al"), actor("user:bo"), actor("user:cy")
INA = actor("user:ina", "oncall")
NO_REVISION = "this approval names no revision of the proposal (the value you saw)"


@pytest.fixture
def app(tmp_path: Path, redis_client: Redis, workspace: str) -> App:
    return build_app(workspace, write_config(tmp_path, CONFIG), client=redis_client)


def asked(app: App, key: str = "eyes.k") -> Proposal:
    """Al's own write, waiting for someone else's approval."""
    waiting = app.gateway.propose(mutation("set", key, "asked", AL))
    assert isinstance(waiting, Pending)
    return waiting.proposal


def stored(app: App, pid: str) -> Proposal:
    found = app.gateway.proposals.get(pid)
    assert found is not None
    return found


def test_the_count_bars_the_asker_whatever_was_read_before(app: App) -> None:
    p = asked(app)
    with pytest.raises(Barred, match="moderator:al asked for this change: someone else must"):
        app.gateway.proposals.approve(p.id, actor("moderator:al"), revision=0)
    with pytest.raises(Barred, match="user:al asked for this change"):
        app.gateway.proposals.approve(p.id, AL, Edit("mine"), revision=0)
    assert stored(app, p.id).model_dump() == p.model_dump()  # nothing written


def test_the_count_bars_the_last_editor_from_the_value_they_asked_for(app: App) -> None:
    """Bo's edit made it read his value: counted where the approval is counted, Bo's own
    approval of it (at its new revision) is barred there, and so is a second edit of his;
    Cy's counts, and applies it."""
    p = asked(app)
    edited = app.gateway.proposals.approve(p.id, BO, Edit("bo's"), revision=0)
    assert edited is not None and edited.proposal.revision == 1
    assert edited.proposal.approvals == []  # under four eyes an edit is no approval
    with pytest.raises(Barred, match="user:bo edited this change: someone else must approve"):
        app.gateway.proposals.approve(p.id, BO, revision=1)
    with pytest.raises(Barred, match="user:bo edited this change"):
        app.gateway.proposals.approve(p.id, BO, Edit("bo's again"), revision=1)
    assert stored(app, p.id).model_dump() == edited.proposal.model_dump()
    stale = app.gateway.proposals.approve(p.id, CY, revision=0)  # the value before the edit
    assert stale is not None and not stale.counted and stale.proposal.approvals == []
    claimed = app.gateway.proposals.approve(p.id, CY, revision=1)
    assert claimed is not None and claimed.proposal.status is ProposalStatus.APPLIED


def test_a_barred_count_is_refused_at_the_gateway_and_recorded(app: App) -> None:
    """The gateway refuses the asker on its copy first; were the copy wrong, the count's
    refusal is the gateway's answer (told as FORBIDDEN, recorded)."""
    p = asked(app)
    refused = app.gateway.apply_proposal(p.id, AL, revision=0)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.FORBIDDEN
    assert refused.message == "user:al asked for this change: someone else must approve it"
    logged = app.gateway.decisions.recent()[-1]
    assert logged["outcome"] == "rejected" and logged["proposal_id"] == p.id
    assert stored(app, p.id).approvals == [] and app.store.version("eyes.k") == 0


def abandoned(app: App, p: Proposal, by: str, revision: int) -> None:
    """``by`` claimed ``p`` at its quorum and stopped before committing, long enough ago
    for the claim to be taken over."""
    claimed = app.gateway.proposals.approve(p.id, actor(by), revision=revision)
    assert claimed is not None and claimed.proposal.status is ProposalStatus.APPLIED
    late = claimed.proposal.model_copy(
        update={"resolved_at": claimed.proposal.resolved_at - CLAIM_LEASE_MS - 1}  # type: ignore[operator]
    )
    app.redis.set(app.store.keys.proposal(p.id), late.model_dump_json(by_alias=True))


def test_an_abandoned_claim_is_never_taken_over_by_its_asker_or_editor(app: App) -> None:
    """Bo edited Al's request, Cy approved the new value and stopped before the commit.
    Whoever takes over commits it as theirs and is counted among its approvers: not Al, not
    Bo; Di may, and does."""
    p = asked(app)
    app.gateway.proposals.approve(p.id, BO, Edit("bo's"), revision=0)
    abandoned(app, p, "user:cy", revision=1)
    box, window = app.gateway.proposals, app.store.idempotency_ttl_ms
    for who, why in [(AL, "user:al asked for"), (BO, "user:bo edited")]:
        with pytest.raises(Barred, match=why):
            box.take_over(p.id, who, f"apply-{p.id}", window, revision=1)
        refused = app.gateway.apply_proposal(p.id, who, revision=1)
        assert isinstance(refused, Rejected) and refused.reason is RejectReason.FORBIDDEN
    assert box.take_over(p.id, actor("user:di"), f"apply-{p.id}", window, revision=0) is None
    held = stored(app, p.id)
    assert held.status is ProposalStatus.APPLIED and held.resolved_by == CY
    done = app.gateway.apply_proposal(p.id, actor("user:di"), revision=1)
    assert isinstance(done, Committed) and not done.duplicate
    meta = done.mutation.meta
    assert (meta["editedBy"], meta["approvedBy"]) == ("user:bo", ["user:cy", "user:di"])


def test_an_approval_naming_no_revision_is_refused_and_changes_nothing(app: App) -> None:
    p = asked(app)
    for edit in (None, Edit("mine")):
        refused = app.gateway.apply_proposal(p.id, BO, edit=edit, revision=None)
        assert isinstance(refused, Rejected) and refused.reason is RejectReason.CONFLICT
        assert refused.message.startswith(NO_REVISION) and "nothing was changed" in refused.message
        assert app.gateway.decisions.recent()[-1]["proposal_id"] == p.id
    assert stored(app, p.id).model_dump() == p.model_dump()
    assert app.store.version("eyes.k") == 0
    done = app.gateway.apply_proposal(p.id, BO, revision=0)
    assert isinstance(done, Committed)
    late = app.gateway.apply_proposal(p.id, CY, revision=None)  # once applied, too
    assert isinstance(late, Rejected) and late.message.startswith(NO_REVISION)


def test_breaking_the_glass_names_the_revision_too(app: App) -> None:
    p = asked(app)
    glass = BreakGlass(app.gateway)
    refused = glass.apply(p.id, INA, "outage", None)
    assert isinstance(refused, Rejected) and refused.message.startswith(NO_REVISION)
    assert app.gateway.proposals.claim(p.id, INA, "outage", revision=1) is None  # not at 1
    assert stored(app, p.id).status is ProposalStatus.PENDING and len(app.log) == 0
    app.gateway.apply_proposal(p.id, BO, edit=Edit("bo's"), revision=0)
    seen_before = glass.apply(p.id, INA, "outage", 0)
    assert isinstance(seen_before, Rejected) and "since you saw it" in seen_before.message
    done = glass.apply(p.id, INA, "outage", 1)
    assert isinstance(done, Committed) and done.mutation.value == "bo's"
