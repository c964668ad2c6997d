"""What the gateway counts: each commit once (not a retried id's first result again), each
refusal once by its reason, each proposal made and how it ended; the sweep refuses nobody
(the proposal's expiry is counted, no rejection), and a click on a proposal whose key moved
on is one conflict and one stale proposal. Real Redis; the counts as ``/metrics`` reads
them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import Pending, Proposal
from core.metrics import COMMITS, PROPOSALS, REJECTIONS, Counts
from core.state.commit_result import Committed, Rejected, RejectReason
from tests.conftest import write_config
from tests.core.metrics.counted import counted
from tests.factories import actor, mutation

CONFIG = """
policy:
  keys:
    - pattern: "guarded.*"
      protected: true
    - pattern: "plain.*"
      type: string
      max_length: 10
    - pattern: "limited.*"
      rate_limit: {max: 1, per_sec: 3600}
"""
MO, AL = actor("moderator:mo"), actor("user:al")


@pytest.fixture
def app(tmp_path: Path, server_redis: Redis, workspace: str) -> App:
    return build_app(workspace, write_config(tmp_path, CONFIG), client=server_redis)


def counts(app: App) -> Counts:
    return counted(app.redis, app.store.workspace)


def proposed(app: App, key: str, value: str = "on") -> Proposal:
    pending = app.gateway.propose(mutation("set", key, value, "agent:llm"))
    assert isinstance(pending, Pending), pending
    return pending.proposal


def rejections(seen: Counts) -> dict[str, int]:
    return {labels[0]: n for labels, n in seen.series(REJECTIONS).items() if n}


def proposals(seen: Counts) -> dict[str, int]:
    return {labels[0]: n for labels, n in seen.series(PROPOSALS).items() if n}


def test_a_commit_counts_once_and_each_refusal_by_its_reason(app: App) -> None:
    change = mutation("set", "plain.topic", "cache")
    assert isinstance(app.gateway.propose(change), Committed)
    again = app.gateway.propose(change)  # a retried delivery: its first result
    assert isinstance(again, Committed) and again.duplicate
    refused = [
        mutation("set", "nowhere.key", "x"),
        mutation("set", "plain.topic", "far too long a topic"),
        mutation("set", "guarded.stream", "off", AL),
        mutation("set", "plain.topic", "db", expected_version=7),
        mutation("set", "limited.a", 1),
        mutation("set", "limited.a", 2),
    ]
    reasons = []
    for each in refused:
        outcome = app.gateway.propose(each)
        reasons.append(outcome.reason.value if isinstance(outcome, Rejected) else "committed")
    assert reasons == [
        "not_allowed",
        "schema",
        "protected",
        "conflict",
        "committed",
        "rate_limited",
    ]
    seen = counts(app)
    assert seen.get(COMMITS) == 2
    assert rejections(seen) == {
        "not_allowed": 1,
        "schema": 1,
        "protected": 1,
        "conflict": 1,
        "rate_limited": 1,
    }


def test_proposals_count_made_applied_and_discarded_once_each(app: App) -> None:
    applied, dropped = proposed(app, "guarded.a"), proposed(app, "guarded.b")
    proposed(app, "guarded.a")  # (another id: another proposal)
    retried = app.gateway.propose(applied.mutation)  # the same id: the same proposal
    assert isinstance(retried, Pending) and retried.proposal.id == applied.id
    assert isinstance(app.gateway.apply_proposal(applied.id, MO, revision=0), Committed)
    assert isinstance(
        app.gateway.apply_proposal(applied.id, MO, revision=0), Committed
    )  # again: once
    app.gateway.discard_proposal(dropped.id, MO, "not now")
    app.gateway.discard_proposal(dropped.id, MO, "still not")
    seen = counts(app)
    assert proposals(seen) == {"created": 3, "applied": 1, "discarded": 1}
    assert seen.get(COMMITS) == 1 and rejections(seen) == {}


def test_the_sweep_expires_without_a_rejection_and_a_late_click_is_one(app: App) -> None:
    due = dataclasses.replace(
        app, gateway=MutationGateway(app.store, app.policy, proposal_expiry_ms=0)
    )
    proposed(due, "guarded.a")
    clicked = proposed(due, "guarded.b")
    assert due.gateway.expire_due() == 2
    late = due.gateway.apply_proposal(clicked.id, MO, revision=0)
    assert isinstance(late, Rejected) and late.reason is RejectReason.EXPIRED
    seen = counts(app)
    assert proposals(seen) == {"created": 2, "expired": 2}
    assert rejections(seen) == {"expired": 1} and seen.get(COMMITS) == 0


def test_a_click_expiring_a_proposal_counts_its_expiry_and_the_refusal(app: App) -> None:
    due = dataclasses.replace(
        app, gateway=MutationGateway(app.store, app.policy, proposal_expiry_ms=0)
    )
    proposal = proposed(due, "guarded.a")
    late = due.gateway.apply_proposal(proposal.id, MO, revision=0)
    assert isinstance(late, Rejected) and late.reason is RejectReason.EXPIRED
    seen = counts(app)
    assert proposals(seen) == {"created": 1, "expired": 1}
    assert rejections(seen) == {"expired": 1}


def test_a_proposal_whose_key_moved_on_is_one_conflict_and_one_stale(app: App) -> None:
    proposal = proposed(app, "plain.topic", "mine")
    assert isinstance(app.gateway.propose(mutation("set", "plain.topic", "theirs")), Committed)
    stale = app.gateway.apply_proposal(proposal.id, MO, revision=0)
    assert isinstance(stale, Rejected) and stale.reason is RejectReason.STALE
    seen = counts(app)
    assert proposals(seen) == {"created": 1, "stale": 1}
    assert rejections(seen) == {"conflict": 1} and seen.get(COMMITS) == 1
