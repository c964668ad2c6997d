"""The gateway beyond the policy matrix: agent proposals applied by a person, and every
decision logged with its reason and correlation id."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from bot.screen.json_logging import JsonFormatter
from core.gateway.mutation_gateway import UnknownProposal
from core.gateway.outcome import Pending, Proposal, ProposalStatus
from core.state.actor import ActorKind
from core.state.commit_result import Committed, Rejected, RejectReason
from tests.conftest import write_config
from tests.factories import actor, mutation
from tests.reads import pending_proposals


def waiting(app: App) -> list[Proposal]:
    return pending_proposals(app.redis, app.store.workspace)


def propose_scene(app: App, scene: str = "BRB") -> Pending:
    pending = app.gateway.propose(
        mutation("set", "scene.name", scene, "agent:llm", reason="chat asked for a break")
    )
    assert isinstance(pending, Pending)
    return pending


def test_an_agent_proposal_waits_and_a_person_applies_it(app: App) -> None:
    pending = propose_scene(app)
    assert [p.id for p in waiting(app)] == [pending.proposal.id]
    assert len(app.log) == 0
    outcome = app.gateway.apply_proposal(pending.proposal.id, actor("user:alice"), revision=0)
    assert isinstance(outcome, Committed) and outcome.entry is not None
    assert outcome.entry.value == "BRB"
    assert outcome.mutation.actor == actor("user:alice")
    assert outcome.mutation.proposed_by is not None
    assert outcome.mutation.proposed_by.kind is ActorKind.AGENT
    assert outcome.mutation.causation_id == pending.mutation.id
    assert outcome.entry.meta["proposedBy"] == {
        "kind": "agent",
        "id": "llm",
        "platform": "local",
        "roles": [],
    }
    [record] = app.log.latest(10)
    assert record.mutation.proposed_by == pending.mutation.actor
    assert waiting(app) == []
    resolved = app.gateway.proposals.get(pending.proposal.id)
    assert resolved is not None and resolved.status is ProposalStatus.APPLIED


def test_a_proposal_commits_once_however_often_it_is_applied(app: App) -> None:
    pending = propose_scene(app)
    first = app.gateway.apply_proposal(pending.proposal.id, actor("user:alice"), revision=0)
    again = app.gateway.apply_proposal(pending.proposal.id, actor("user:bob"), revision=0)
    assert isinstance(first, Committed) and isinstance(again, Committed)
    assert again.duplicate and again.log_id == first.log_id
    assert again.mutation.actor == actor("user:alice")
    assert len(app.log) == 1


def test_a_protected_proposal_needs_a_moderator(app: App) -> None:
    pending = app.gateway.propose(mutation("set", "stream.state", "off", "agent:llm"))
    assert isinstance(pending, Pending)
    denied = app.gateway.apply_proposal(pending.proposal.id, actor("user:alice"), revision=0)
    assert isinstance(denied, Rejected) and denied.reason is RejectReason.PROTECTED
    assert app.store.get("stream.state") is None
    assert [p.id for p in waiting(app)] == [pending.proposal.id]
    applied = app.gateway.apply_proposal(pending.proposal.id, actor("moderator:mo"), revision=0)
    assert isinstance(applied, Committed)


def test_a_stale_proposal_is_rejected_with_the_latest_entry(app: App) -> None:
    pending = propose_scene(app)
    app.gateway.propose(mutation("set", "scene.name", "Live", "user:bob"))
    stale = app.gateway.apply_proposal(
        pending.proposal.id, actor("user:alice"), expected_version=0, revision=0
    )
    assert isinstance(stale, Rejected) and stale.reason is RejectReason.STALE
    assert stale.latest is not None and stale.latest.value == "Live"


def test_a_discarded_proposal_cannot_be_applied(app: App) -> None:
    pending = propose_scene(app)
    app.gateway.discard_proposal(pending.proposal.id, actor("user:alice"))
    outcome = app.gateway.apply_proposal(pending.proposal.id, actor("moderator:mo"), revision=0)
    assert isinstance(outcome, Rejected) and outcome.reason is RejectReason.NOT_FOUND
    assert "discarded by user:alice" in outcome.message
    assert app.store.get("scene.name") is None


def test_only_people_apply_or_discard_proposals(app: App) -> None:
    pending = propose_scene(app)
    outcome = app.gateway.apply_proposal(pending.proposal.id, actor("agent:other"), revision=0)
    assert isinstance(outcome, Rejected) and outcome.reason is RejectReason.FORBIDDEN
    with pytest.raises(Exception, match="a person must"):
        app.gateway.discard_proposal(pending.proposal.id, actor("automation:rule"))
    assert app.store.get("scene.name") is None


def test_an_unknown_proposal_is_a_clear_error(app: App) -> None:
    with pytest.raises(UnknownProposal, match="no proposal nope"):
        app.gateway.apply_proposal("nope", actor("user:alice"), revision=0)


def test_every_decision_is_logged_as_json_with_reason_and_correlation_id(
    app: App, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="deliberate.gateway")
    ok = mutation("set", "decision.db", "postgres", correlation_id="corr-1", reason="fast")
    bad = mutation("set", "stream.state", "off", correlation_id="corr-2")
    app.gateway.propose(ok)
    app.gateway.propose(bad)
    propose_scene(app)
    lines = [json.loads(JsonFormatter().format(r)) for r in caplog.records]
    assert [(x["outcome"], x["correlation_id"]) for x in lines[:2]] == [
        ("committed", "corr-1"),
        ("rejected", "corr-2"),
    ]
    assert lines[0]["reason"] == "fast" and lines[0]["version"] == 1
    assert lines[1]["reason"] == "protected" and "moderator" in lines[1]["message"]
    assert lines[2]["outcome"] == "pending" and lines[2]["proposal_id"]


def test_decisions_that_commit_nothing_are_kept_for_tracing(app: App) -> None:
    app.gateway.propose(mutation("set", "nope.key", 1, correlation_id="c-9"))
    propose_scene(app)
    kept = app.gateway.decisions.recent()
    assert [(d["outcome"], d["reason"]) for d in kept] == [
        ("rejected", "not_allowed"),
        ("pending", "awaits a person with the right role"),
    ]
    assert kept[0]["correlation_id"] == "c-9"


def test_a_retried_agent_mutation_makes_one_proposal_and_one_commit(app: App) -> None:
    m = mutation("set", "scene.name", "BRB", "agent:llm")
    first, again = app.gateway.propose(m), app.gateway.propose(m)
    assert isinstance(first, Pending) and isinstance(again, Pending)
    assert first.proposal.id == again.proposal.id == m.id
    assert len(waiting(app)) == 1
    assert isinstance(app.gateway.apply_proposal(m.id, actor("user:alice"), revision=0), Committed)
    retried = app.gateway.propose(m)
    assert isinstance(retried, Pending) and retried.proposal.status is ProposalStatus.APPLIED
    assert len(app.log) == 1


SECRET_FOR_AGENTS = """
policy:
  keys:
    - pattern: "vault.*"
      agent: commit
      secret: true
"""


def test_an_agent_never_gets_a_secret_back_in_a_conflict(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    app = build_app(workspace, write_config(tmp_path, SECRET_FOR_AGENTS), client=redis_client)
    app.gateway.propose(mutation("set", "vault.key", "hunter2", "user:alice"))
    by_agent = app.gateway.propose(
        mutation("set", "vault.key", "x", "agent:llm", expected_version=0)
    )
    assert isinstance(by_agent, Rejected) and by_agent.reason is RejectReason.CONFLICT
    assert by_agent.latest is None and by_agent.version == 1
    by_person = app.gateway.propose(
        mutation("set", "vault.key", "x", "user:bob", expected_version=0)
    )
    assert isinstance(by_person, Rejected) and by_person.latest is not None


def race_apply_and_discard(app: App, pid: str) -> tuple[object, Any]:
    results: dict[str, Any] = {}
    start = threading.Barrier(2)

    def apply() -> None:
        start.wait()
        results["apply"] = app.gateway.apply_proposal(pid, actor("user:alice"), revision=0)

    def discard() -> None:
        start.wait()
        results["discard"] = app.gateway.discard_proposal(pid, actor("user:bob"))

    threads = [threading.Thread(target=apply), threading.Thread(target=discard)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results["apply"], results["discard"]


def test_apply_and_discard_racing_never_both_win(app: App) -> None:
    for round_ in range(30):
        proposed = app.gateway.propose(mutation("set", f"decision.race-{round_}", "x", "agent:llm"))
        assert isinstance(proposed, Pending)
        pid = proposed.proposal.id
        applied, discarded = race_apply_and_discard(app, pid)
        committed = isinstance(applied, Committed)
        assert committed != (discarded.status is ProposalStatus.DISCARDED), f"round {round_}"
        final = app.gateway.proposals.get(pid)
        assert final is not None
        assert final.status is (ProposalStatus.APPLIED if committed else ProposalStatus.DISCARDED)


def test_a_refused_apply_leaves_the_proposal_pending(app: App) -> None:
    pending = app.gateway.propose(mutation("set", "stream.state", "off", "agent:llm"))
    assert isinstance(pending, Pending)
    refused = app.gateway.apply_proposal(pending.proposal.id, actor("user:alice"), revision=0)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.PROTECTED
    assert [p.id for p in waiting(app)] == [pending.proposal.id]
