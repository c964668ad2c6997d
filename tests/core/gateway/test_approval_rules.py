"""Approval rules in CEL per key pattern (``approval.when``), with the quorum and four eyes
they combine with, and denials that end a proposal at ``deny_at``. Real Redis; the approvers
are the payloads an attacker would send: a reviewer without the rule's roles, the same person
twice, the requester under four eyes, an approval of a value edited since, a late one."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from core.config.core_config import load_config
from core.errors import ConfigError
from core.gateway.edits import Edit
from core.gateway.outcome import Pending, ProposalStatus
from core.state.commit_result import Committed, Rejected, RejectReason
from tests.conftest import write_config
from tests.core.gateway.test_lifecycle import agent_proposal as proposed
from tests.core.gateway.test_lifecycle import stored
from tests.factories import actor

MOD_AND_OWNER = (
    'approvals.exists(a, "moderator" in a.roles) && approvals.exists(a, "owner" in a.roles)'
)
CONFIG = f"""
policy:
  keys:
    - pattern: "both.*"
      approval:
        when: '{MOD_AND_OWNER}'
        four_eyes: true
    - pattern: "two.*"
      approval:
        quorum: 2
        when: 'approvals.filter(a, "moderator" in a.roles).size() >= 1'
    - pattern: "deny.*"
      approval: {{quorum: 3, deny_at: 2}}
    - pattern: "value.*"
      approval:
        when: 'mutation.value == "small" || approvals.size() >= 2'
    - pattern: "once.*"
      approval: {{}}
    - pattern: "num.*"
      type: integer
      approval:
        when: 'mutation.value + 1 > 10 && approvals.size() >= 1'
    - pattern: "first.*"
      approval:
        when: '"moderator" in approvals[0].roles'
"""

AL, BO, CY = (actor(f"user:{n}") for n in ("al", "bo", "cy"))
MO = actor("moderator:mo")
OWEN = actor("user:owen", "owner")  # the tenant's role binding: owner


@pytest.fixture
def app(tmp_path: Path, server_redis: Redis, workspace: str) -> App:
    return build_app(workspace, write_config(tmp_path, CONFIG), client=server_redis)


# --- the rule ------------------------------------------------------------------------------


def test_a_moderator_and_an_owner_commit_it_and_the_proposal_keeps_the_rule(app: App) -> None:
    p = proposed(app, "both.x")
    assert p.approve_when == MOD_AND_OWNER and p.four_eyes
    first = app.gateway.apply_proposal(p.id, MO, revision=0)
    assert isinstance(first, Pending)
    assert f"awaits approvals meeting {MOD_AND_OWNER}" in first.to_dict()["message"]
    done = app.gateway.apply_proposal(p.id, OWEN, revision=0)
    assert isinstance(done, Committed)
    assert done.mutation.meta["approvedBy"] == ["moderator:mo", "user:owen"]


def test_reviewers_outside_the_rules_roles_cannot_make_it_pass(app: App) -> None:
    p = proposed(app, "both.y")
    for reviewer in (BO, CY, actor("user:di", "member"), actor("admin:root")):
        assert isinstance(app.gateway.apply_proposal(p.id, reviewer, revision=0), Pending)
    assert app.gateway.apply_proposal(p.id, OWEN, revision=0).name == "pending"  # no moderator yet
    assert len(stored(app, p.id).approvals) == 5 and app.store.version("both.y") == 0
    assert isinstance(app.gateway.apply_proposal(p.id, MO, revision=0), Committed)


def test_the_same_person_twice_counts_once(app: App) -> None:
    p = proposed(app, "two.x")
    assert isinstance(app.gateway.apply_proposal(p.id, MO, revision=0), Pending)
    again = app.gateway.apply_proposal(p.id, MO, revision=0)  # a second click
    also = app.gateway.apply_proposal(
        p.id, actor("moderator:mo", "owner"), revision=0
    )  # another role
    assert isinstance(again, Pending) and isinstance(also, Pending)
    assert [str(a.by) for a in stored(app, p.id).approvals] == ["moderator:mo"]
    assert app.store.version("two.x") == 0
    # the quorum holds beside the rule: a second person, any writer, commits it
    assert isinstance(app.gateway.apply_proposal(p.id, BO, revision=0), Committed)


def test_the_quorum_alone_is_not_enough_without_the_rule(app: App) -> None:
    p = proposed(app, "two.y")
    for person in (AL, BO, CY):
        assert isinstance(app.gateway.apply_proposal(p.id, person, revision=0), Pending)
    assert isinstance(app.gateway.apply_proposal(p.id, MO, revision=0), Committed)


def test_the_requester_under_four_eyes_is_refused_and_not_counted(app: App) -> None:
    p = proposed(app, "both.own", asker=MO)
    refused = app.gateway.apply_proposal(p.id, MO, revision=0)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.FORBIDDEN
    assert stored(app, p.id).approvals == []
    assert isinstance(
        app.gateway.apply_proposal(p.id, OWEN, revision=0), Pending
    )  # no other moderator
    assert isinstance(
        app.gateway.apply_proposal(p.id, actor("moderator:max"), revision=0), Committed
    )


def test_the_rule_reads_the_value_as_edited(app: App) -> None:
    small = proposed(app, "value.a", "small")
    assert isinstance(app.gateway.apply_proposal(small.id, BO, revision=0), Committed)
    big = proposed(app, "value.b", "big")
    assert isinstance(app.gateway.apply_proposal(big.id, BO, revision=0), Pending)
    # an edit to "small" is its editor's approval, and now meets the rule
    edited = app.gateway.apply_proposal(big.id, CY, edit=Edit("small"), revision=0)
    assert isinstance(edited, Committed) and edited.mutation.value == "small"


def test_a_stale_or_late_approval_is_refused_and_counts_nothing(app: App) -> None:
    p = proposed(app, "both.z")
    assert isinstance(app.gateway.apply_proposal(p.id, BO, edit=Edit("b"), revision=0), Pending)
    late = app.gateway.apply_proposal(p.id, MO, revision=0)  # saw the value before the edit
    assert isinstance(late, Rejected) and late.reason is RejectReason.CONFLICT
    assert stored(app, p.id).approvals == []  # four eyes: the edit counted no approval
    app.gateway.discard_proposal(p.id, AL, "no")  # the requester withdraws it
    after = app.gateway.apply_proposal(p.id, OWEN, revision=1)
    assert isinstance(after, Rejected) and after.reason is RejectReason.NOT_FOUND
    assert app.store.version("both.z") == 0


def test_an_unknown_proposal_is_refused(app: App) -> None:
    from core.gateway.mutation_gateway import UnknownProposal

    with pytest.raises(UnknownProposal):
        app.gateway.apply_proposal("forged-id", MO, revision=0)


# --- denials -------------------------------------------------------------------------------


def test_denials_end_it_at_deny_at_distinct_people(app: App) -> None:
    p = proposed(app, "deny.x", asker=None)
    first = app.gateway.discard_proposal(p.id, BO, "too early")
    assert first.status is ProposalStatus.PENDING and [str(d.by) for d in first.denials] == [
        "user:bo"
    ]
    twice = app.gateway.discard_proposal(p.id, BO, "really")  # the same person: once
    assert twice.status is ProposalStatus.PENDING and len(twice.denials) == 1
    assert twice.denials[0].reason == "really"
    ended = app.gateway.discard_proposal(p.id, CY, "no")
    assert ended.status is ProposalStatus.DISCARDED and ended.reason == "really; no"
    refused = app.gateway.apply_proposal(p.id, MO, revision=0)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.NOT_FOUND
    rows = [r for r in app.gateway.decisions.recent() if r.get("proposal_id") == p.id]
    assert [r["outcome"] for r in rows if r["outcome"] in ("denied", "discarded")] == [
        "denied",
        "denied",
        "discarded",
    ]


def test_a_denial_takes_back_an_approval_and_an_approval_a_denial(app: App) -> None:
    p = proposed(app, "deny.y", asker=None)
    assert isinstance(app.gateway.apply_proposal(p.id, BO, revision=0), Pending)
    changed = app.gateway.discard_proposal(p.id, BO, "changed my mind")
    assert changed.approvals == [] and len(changed.denials) == 1
    assert isinstance(app.gateway.apply_proposal(p.id, BO, revision=0), Pending)
    back = stored(app, p.id)
    assert back.denials == [] and [a.by for a in back.approvals] == [BO]


def test_a_denial_by_someone_who_may_not_decide_is_refused(app: App) -> None:
    from core.gateway.mutation_gateway import DiscardRefused

    p = proposed(app, "deny.z", asker=None)
    with pytest.raises(DiscardRefused):
        app.gateway.discard_proposal(p.id, actor("guest:gus"), "no")
    assert stored(app, p.id).denials == []


def test_without_deny_at_the_first_discard_ends_it(app: App) -> None:
    p = proposed(app, "once.x", asker=None)
    assert app.gateway.discard_proposal(p.id, BO).status is ProposalStatus.DISCARDED


def test_the_requester_withdraws_it_at_once(app: App) -> None:
    p = proposed(app, "deny.mine", asker=AL)
    assert app.gateway.discard_proposal(p.id, AL, "never mind").status is (ProposalStatus.DISCARDED)


# --- checked at load -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("approval", "message"),
    [
        ("when: 'approvals.size() >='", "CEL does not compile"),
        ("when: 'count(approvals, role == \"moderator\") >= 1'", "CEL has no function ['count']"),
        ("when: 'approvals.exists(a, a.id == boss)'", "CEL reads unknown names ['boss']"),
        ("when: 'approvals.size()'", "CEL gives int, not a bool"),
        ("deny_at: 0", "greater than or equal to 1"),
    ],
)
def test_a_bad_rule_fails_the_load_with_file_line_and_field(
    tmp_path: Path, approval: str, message: str
) -> None:
    text = f'policy:\n  keys:\n    - pattern: "k.*"\n      approval:\n        {approval}\n'
    path = write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    said = str(caught.value)
    assert f"{path.name}:5: policy.keys[0].approval." in said, said
    assert message in said


DOCS_EXAMPLE = """
policy:
  keys:
    - pattern: "stream.*"
      protected: true
      approval:
        four_eyes: true
        when: >-
          approvals.exists(a, "moderator" in a.roles)
          && approvals.filter(a, "owner" in a.roles).size() >= 1
          && approvals.size() >= 2
        deny_at: 2
"""


def test_the_documented_rule_needs_two_people_even_if_one_holds_both_roles(
    tmp_path: Path, server_redis: Redis, workspace: str
) -> None:
    app = build_app(workspace, write_config(tmp_path, DOCS_EXAMPLE), client=server_redis)
    p = proposed(app, "stream.state", "live")
    both = actor("moderator:mo", "owner")
    assert isinstance(app.gateway.apply_proposal(p.id, both, revision=0), Pending)
    assert isinstance(app.gateway.apply_proposal(p.id, both, revision=0), Pending)  # once
    refused = app.gateway.apply_proposal(p.id, OWEN, revision=0)  # protected: a user may not
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.PROTECTED
    assert isinstance(
        app.gateway.apply_proposal(p.id, actor("moderator:max"), revision=0), Committed
    )


# --- a rule that fails on a value ---------------------------------------------------------


def test_a_rule_that_overflows_on_a_value_leaves_the_proposal_waiting_never_the_click_failing(
    app: App,
) -> None:
    """A value from chat may make the rule fail (an integer at its limit plus one): the rule
    is not met, the click is answered, and the proposal waits (CEL raises OverflowError)."""
    p = proposed(app, "num.x", 9_223_372_036_854_775_807)
    waiting = app.gateway.apply_proposal(p.id, MO, revision=0)
    assert isinstance(waiting, Pending), waiting
    assert app.store.get("num.x") is None
    fine = proposed(app, "num.y", 20)
    assert isinstance(app.gateway.apply_proposal(fine.id, MO, revision=0), Committed)


def test_a_rule_that_indexes_past_the_approvals_loads_and_is_judged_on_real_ones(
    app: App,
) -> None:
    """``approvals[0]`` fails on no approvals (IndexError): the config still loads (the
    sample cannot judge it), and a moderator's approval meets it."""
    p = proposed(app, "first.x")
    assert isinstance(app.gateway.apply_proposal(p.id, MO, revision=0), Committed)
    q = proposed(app, "first.y")
    assert isinstance(app.gateway.apply_proposal(q.id, BO, revision=0), Pending)
