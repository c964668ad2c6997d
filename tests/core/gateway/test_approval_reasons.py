"""Why a person approves, kept with their approval at the gateway: as said (blanks run
together), cut at ``MAX_REASON``, a secret value struck out of it before it is kept, nothing
kept when nothing readable was said (and an approval stored as before: no ``reason``). Real
Redis."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis import Redis

from bot.app import App, build_app
from core.gateway.mutation_gateway import MAX_REASON
from core.gateway.outcome import Pending, Proposal
from core.redaction import readable
from tests.conftest import write_config
from tests.factories import actor, mutation

CONFIG = """
policy:
  keys:
    - pattern: "vault.*"
      type: string
      secret: true
      writers: [user, moderator, admin]
      approval: {people: true, quorum: 2}
    - pattern: "plain.*"
      type: string
      approval: {people: true, quorum: 2}
"""
SECRET_VALUE = "hunter2-correct-horse"
BO = actor("user:bo")


@pytest.fixture
def team(tmp_path: Path, server_redis: Redis, workspace: str) -> App:
    return build_app(workspace, write_config(tmp_path, CONFIG), client=server_redis)


def asked(app: App, key: str, value: str = "v") -> Proposal:
    waiting = app.gateway.propose(mutation("set", key, value, "user:al"))
    assert isinstance(waiting, Pending), waiting
    return waiting.proposal


def approved(app: App, p: Proposal, reason: str | None) -> Proposal:
    outcome = app.gateway.apply_proposal(p.id, BO, revision=p.revision, reason=reason)
    assert isinstance(outcome, Pending), outcome
    kept = app.gateway.proposals.get(p.id)
    assert kept is not None
    return kept


def test_a_reason_is_kept_with_the_approval_as_said(team: App) -> None:
    kept = approved(team, asked(team, "plain.a"), "  looks\n  right  ")
    [approval] = kept.approvals
    assert approval.by == BO and approval.reason == "looks right"


def test_a_secret_value_is_struck_out_of_the_reason(team: App) -> None:
    said = f"yes, {SECRET_VALUE} is the new one ({SECRET_VALUE.upper()})"
    kept = approved(team, asked(team, "vault.token", SECRET_VALUE), said)
    [approval] = kept.approvals
    assert approval.reason is not None and approval.reason.startswith("yes, (secret) is")
    raw = str(team.redis.get(team.store.keys.proposal(kept.id)))
    assert SECRET_VALUE.lower() not in json.dumps(json.loads(raw)["approvals"]).lower()


def test_the_value_the_key_holds_now_is_struck_out_too(team: App) -> None:
    """Replacing a leaked secret, the approver names the old one: it is a secret still."""
    old = "OLD-hunter2-leaked-value"
    team.store.commit(mutation("set", "vault.old", old, "system:seed"))  # what it holds now
    assert team.store.get("vault.old").value == old  # type: ignore[union-attr]
    said = f"replacing {old} which leaked"
    kept = approved(team, asked(team, "vault.old", "NEW-value-123456"), said)
    [approval] = kept.approvals
    assert approval.reason == "replacing (secret) which leaked"
    # and a discard's reason the same way
    other = asked(team, "vault.old", "ANOTHER-value-98765")
    team.gateway.discard_proposal(other.id, BO, f"no: keep {old}")
    gone = team.gateway.proposals.get(other.id)
    assert gone is not None and gone.reason == "no: keep (secret)"


def test_without_a_reason_the_approval_is_stored_as_before(team: App) -> None:
    kept = approved(team, asked(team, "plain.b"), None)
    raw = json.loads(str(team.redis.get(team.store.keys.proposal(kept.id))))
    assert [set(a) for a in raw["approvals"]] == [{"by", "at"}]


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=600))
def test_any_reason_is_kept_readable_and_at_most_max_reason(team: App, said: str) -> None:
    kept = approved(team, asked(team, "plain.c"), said)
    [approval] = kept.approvals
    if not readable(said):
        assert approval.reason is None
    else:
        assert approval.reason is not None and 0 < len(approval.reason) <= MAX_REASON
