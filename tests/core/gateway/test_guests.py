"""Guests (another organisation's user in a shared channel, a talk-only member) may talk;
what else is the policy's ``guests:`` setting, off by default: no commits, no applies, no
discards."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from core.errors import DeliberateError
from core.gateway.outcome import Pending, ProposalStatus
from core.state.actor import Actor
from core.state.commit_result import Committed, Rejected, RejectReason
from tests.conftest import write_config
from tests.factories import mutation

GUEST = Actor.parse("guest:U0GUEST")
GUESTS_MAY = """
policy:
  guests: {commit: true, apply: true}
  keys:
    - pattern: "decision.*"
      type: string
    - pattern: stream.state
      protected: true
"""


def proposal_id(app: App, key: str = "decision.db") -> str:
    pending = app.gateway.propose(mutation("set", key, "postgres", "agent:assistant"))
    assert isinstance(pending, Pending)
    return pending.proposal.id


def test_by_default_a_guest_commits_nothing_and_resolves_no_proposal(app: App) -> None:
    refused = app.gateway.propose(mutation("set", "decision.db", "postgres", GUEST))
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.FORBIDDEN
    assert "guest" in refused.message and app.store.get("decision.db") is None
    pid = proposal_id(app)
    applied = app.gateway.apply_proposal(pid, GUEST, revision=0)
    assert isinstance(applied, Rejected) and "guest" in applied.message
    with pytest.raises(DeliberateError, match="guest"):
        app.gateway.discard_proposal(pid, GUEST)
    proposal = app.gateway.proposals.get(pid)
    assert proposal is not None and proposal.status is ProposalStatus.PENDING
    assert len(app.log) == 0


def test_where_the_policy_lets_them_a_guest_writes_as_a_user_never_as_a_moderator(
    redis_client: Redis, workspace: str, tmp_path: Path
) -> None:
    app = build_app(workspace, write_config(tmp_path, GUESTS_MAY), client=redis_client)
    done = app.gateway.propose(mutation("set", "decision.db", "postgres", GUEST))
    assert isinstance(done, Committed) and str(done.mutation.actor) == "guest:U0GUEST"
    assert isinstance(app.gateway.apply_proposal(proposal_id(app), GUEST, revision=0), Committed)
    protected = app.gateway.propose(mutation("set", "stream.state", "off", GUEST))
    assert isinstance(protected, Rejected) and protected.reason is RejectReason.PROTECTED


@pytest.mark.parametrize(("commit", "apply"), [(True, False), (False, True)])
def test_commit_and_apply_are_separate_permissions(
    redis_client: Redis, workspace: str, tmp_path: Path, commit: bool, apply: bool
) -> None:
    text = GUESTS_MAY.replace(
        "guests: {commit: true, apply: true}",
        f"guests: {{commit: {str(commit).lower()}, apply: {str(apply).lower()}}}",
    )
    app = build_app(workspace, write_config(tmp_path, text), client=redis_client)
    own = app.gateway.propose(mutation("set", "decision.own", "x", GUEST))
    applied = app.gateway.apply_proposal(proposal_id(app), GUEST, revision=0)
    assert isinstance(own, Committed) is commit
    assert isinstance(applied, Committed) is apply
