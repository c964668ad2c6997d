"""An edit never takes over a claim: taking over commits the value the claimer approved, and
an edit says its approver wants another. Found by the attack on issue 41: Bo claimed Al's
request and stopped before committing; Cy's Edit (a value of Cy's own) then took the claim
over and committed Al's value, with Cy among its approvers, an approval Cy never gave."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from core.gateway.edits import Edit
from core.gateway.outcome import ProposalStatus
from core.state.commit_result import Committed, Rejected, RejectReason
from tests.conftest import write_config
from tests.core.gateway.test_four_eyes_count import CONFIG, CY, abandoned, asked, stored
from tests.factories import actor


@pytest.fixture
def app(tmp_path: Path, redis_client: Redis, workspace: str) -> App:
    return build_app(workspace, write_config(tmp_path, CONFIG), client=redis_client)


def test_an_edit_over_an_abandoned_claim_commits_nothing(app: App) -> None:
    p = asked(app)
    abandoned(app, p, "user:bo", revision=0)
    refused = app.gateway.apply_proposal(p.id, CY, edit=Edit("cy's own"), revision=0)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.CONFLICT
    assert "user:bo is applying this proposal as it was" in refused.message
    assert "nothing was changed" in refused.message
    assert app.store.get("eyes.k") is None
    held = stored(app, p.id)
    assert held.status is ProposalStatus.APPLIED and held.resolved_by == actor("user:bo")
    assert [str(a.by) for a in held.approvals] == ["user:bo"]
    logged = app.gateway.decisions.recent()[-1]
    assert logged["outcome"] == "rejected" and logged["proposal_id"] == p.id
    # an Apply of the value as it was still finishes it, as before
    done = app.gateway.apply_proposal(p.id, CY, revision=0)
    assert isinstance(done, Committed) and done.mutation.value == "asked"
    assert done.mutation.meta["approvedBy"] == ["user:bo", "user:cy"]


def test_an_edit_over_a_fresh_claim_is_told_it_is_being_applied(app: App) -> None:
    p = asked(app)
    claimed = app.gateway.proposals.approve(p.id, actor("user:bo"), revision=0)
    assert claimed is not None and claimed.proposal.status is ProposalStatus.APPLIED
    refused = app.gateway.apply_proposal(p.id, CY, edit=Edit("cy's own"), revision=0)
    assert isinstance(refused, Rejected) and "as it was" in refused.message
    assert app.store.get("eyes.k") is None
