"""Discarding a proposal takes the right to apply it: the key's writers (roles bound by a
tenant among them), a moderator or an admin for a protected key, a guest only where the
policy lets guests apply. A refused discard changes nothing, is recorded, and says why
without the value. Under four eyes the person who asked for a change may withdraw it, as
long as they may apply it otherwise. Real Redis, the gateway as every path calls it."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from core.errors import DeliberateError
from core.gateway.approving import applying
from core.gateway.edits import Edit
from core.gateway.mutation_gateway import DiscardRefused
from core.gateway.outcome import Pending, Proposal, ProposalStatus
from core.gateway.policy import VerdictKind
from core.state.actor import Actor
from core.state.commit_result import Committed, Rejected, RejectReason
from tests.conftest import write_config
from tests.factories import actor, mutation

CONFIG = """
roles:
  crew:
    members: ["slack:U0CREW"]
policy:
  keys:
    - pattern: "mods.*"
      protected: true
      approval: {quorum: 2}
    - pattern: "crew.*"
      writers: [crew, admin]
    - pattern: "asked.*"
      approval: {people: true, four_eyes: true}
    - pattern: "guarded.*"
      protected: true
      approval: {four_eyes: true}
    - pattern: "vault.*"
      secret: true
      writers: [admin]
    - pattern: "plain.*"
"""

AL, BO = actor("user:al"), actor("user:bo")
MO, MAX, ROOT = actor("moderator:mo"), actor("moderator:max"), actor("admin:root")
GUEST = actor("guest:U0GUEST")
# as a tenant's binding makes them: a member holding the role the key's writers name
CREW = Actor.parse("user:U0CREW", platform="slack").model_copy(update={"roles": ("crew",)})
BOUND_MOD = Actor.parse("moderator:U0SAM", platform="slack").model_copy(
    update={"roles": ("moderator",)}
)


@pytest.fixture
def rights(tmp_path: Path, server_redis: Redis, workspace: str) -> App:
    return build_app(workspace, write_config(tmp_path, CONFIG), client=server_redis)


def agent_proposal(app: App, key: str, value: object = "x", asker: Actor | None = AL) -> Proposal:
    meta = {} if asker is None else {"requestedBy": asker.model_dump(mode="json")}
    pending = app.gateway.propose(mutation("set", key, value, "agent:llm", meta=meta))
    assert isinstance(pending, Pending), pending
    return pending.proposal


def stored(app: App, pid: str) -> Proposal:
    found = app.gateway.proposals.get(pid)
    assert found is not None
    return found


def refused(app: App, pid: str, who: Actor, reason: str | None = "no") -> DiscardRefused:
    before = stored(app, pid)
    with pytest.raises(DiscardRefused) as caught:
        app.gateway.discard_proposal(pid, who, reason)
    after = stored(app, pid)
    assert after == before  # nothing changed: status, approvals, reason, resolver
    return caught.value


def test_a_member_cannot_discard_a_protected_proposal_a_moderator_approved(rights: App) -> None:
    """The reproduction: a plain member's discard undid a moderator's approval."""
    p = agent_proposal(rights, "mods.ban", True)
    assert isinstance(rights.gateway.apply_proposal(p.id, MO, revision=0), Pending)  # 1 of 2
    refusal = refused(rights, p.id, AL, "I don't like it").refusal
    assert refusal.reason is RejectReason.PROTECTED
    assert refusal.message == (
        "mods.ban is protected: only a moderator or an admin may discard a proposal to "
        "change it; nothing was changed"
    )
    waiting = stored(rights, p.id)
    assert waiting.status is ProposalStatus.PENDING and [a.by for a in waiting.approvals] == [MO]
    row = rights.gateway.decisions.recent()[-1]
    assert (row["outcome"], row["reason"], row["actor"], row["proposal_id"]) == (
        "rejected",
        "protected",
        "user:al",
        p.id,
    )
    done = rights.gateway.apply_proposal(p.id, MAX, revision=0)  # the second moderator still can
    assert isinstance(done, Committed)
    assert rights.store.get("mods.ban").value is True  # type: ignore[union-attr]


def test_a_moderator_may_discard_it_and_one_bound_by_a_tenant_too(rights: App) -> None:
    for who in (MAX, BOUND_MOD, ROOT):
        p = agent_proposal(rights, "mods.kick", True)
        after = rights.gateway.discard_proposal(p.id, who, "not today")
        assert after.status is ProposalStatus.DISCARDED and after.resolved_by == who


def test_writers_decide_who_discards_and_a_bound_role_counts(rights: App) -> None:
    p = agent_proposal(rights, "crew.call", "places")
    for who in (AL, MO):  # a moderator is not a writer of crew.*
        refusal = refused(rights, p.id, who).refusal
        assert refusal.reason is RejectReason.FORBIDDEN
        assert refusal.message == (
            f"{who} may not discard a proposal to change crew.call: only those who may "
            "write it may (writers: crew, admin); nothing was changed"
        )
    assert rights.gateway.discard_proposal(p.id, CREW).status is ProposalStatus.DISCARDED


def test_a_guest_is_refused_and_where_guests_may_apply_discards_as_a_user(
    rights: App, tmp_path: Path, server_redis: Redis, workspace: str
) -> None:
    p = agent_proposal(rights, "plain.topic")
    refusal = refused(rights, p.id, GUEST).refusal
    assert refusal.message == (
        "guest:U0GUEST is a guest here: guests may talk, not discard proposals; nothing was changed"
    )
    lenient = CONFIG.replace("policy:\n", "policy:\n  guests: {apply: true}\n")
    path = write_config(tmp_path, lenient, "lenient.yaml")
    open_door = build_app(workspace, path, client=server_redis)
    guarded = agent_proposal(open_door, "mods.mute", True)
    assert refused(open_door, guarded.id, GUEST).refusal.reason is RejectReason.PROTECTED
    assert open_door.gateway.discard_proposal(p.id, GUEST).status is ProposalStatus.DISCARDED


def test_a_secret_keys_refusal_says_nothing_of_its_value(rights: App) -> None:
    hidden = "hunter2-the-stream-key"
    p = agent_proposal(rights, "vault.key", hidden)
    refusal = refused(rights, p.id, MO).refusal
    assert hidden not in refusal.message and "vault.key" in refusal.message
    assert hidden not in str(rights.gateway.decisions.recent()[-1])
    assert rights.gateway.discard_proposal(p.id, ROOT).status is ProposalStatus.DISCARDED


def test_under_four_eyes_the_asker_may_withdraw_what_they_may_not_approve(rights: App) -> None:
    waiting = rights.gateway.propose(mutation("set", "asked.scene", "BRB", AL))
    assert isinstance(waiting, Pending) and waiting.proposal.requested_by == AL
    pid = waiting.proposal.id
    mine = rights.gateway.apply_proposal(pid, AL, revision=0)
    assert isinstance(mine, Rejected) and mine.reason is RejectReason.FORBIDDEN
    withdrawn = rights.gateway.discard_proposal(pid, AL, "asked too soon")
    assert withdrawn.status is ProposalStatus.DISCARDED and withdrawn.resolved_by == AL
    assert rights.store.version("asked.scene") == 0


def test_under_four_eyes_an_asker_without_the_right_may_not_withdraw(rights: App) -> None:
    """The model proposed a protected change at a member's word: their request, but not
    theirs to decide; a moderator still may (and the member may see it expire)."""
    p = agent_proposal(rights, "guarded.end", True, asker=AL)
    assert refused(rights, p.id, AL).refusal.reason is RejectReason.PROTECTED
    assert rights.gateway.discard_proposal(p.id, MO).status is ProposalStatus.DISCARDED


def test_under_four_eyes_an_editor_may_withdraw_too(rights: App) -> None:
    p = agent_proposal(rights, "guarded.stop", "a", asker=MAX)
    edited = rights.gateway.apply_proposal(p.id, MO, edit=Edit(value="b"), revision=p.revision)
    assert isinstance(edited, Pending)  # under four eyes an edit counts no approval
    assert rights.gateway.discard_proposal(p.id, MO).status is ProposalStatus.DISCARDED


def test_a_key_no_pattern_allows_any_more_is_nobodys_to_discard(
    rights: App, tmp_path: Path, server_redis: Redis, workspace: str
) -> None:
    p = agent_proposal(rights, "plain.gone")
    narrower = CONFIG.replace('    - pattern: "plain.*"\n', "")
    changed = build_app(workspace, write_config(tmp_path, narrower, "n.yaml"), client=server_redis)
    refusal = refused(changed, p.id, ROOT).refusal
    assert refusal.reason is RejectReason.NOT_ALLOWED
    assert "no policy pattern allows the key plain.gone" in refusal.message


def test_only_people_discard_still(rights: App) -> None:
    p = agent_proposal(rights, "plain.x")
    with pytest.raises(DeliberateError, match="a person must"):
        rights.gateway.discard_proposal(p.id, actor("automation:rule"))
    assert stored(rights, p.id).status is ProposalStatus.PENDING


PEOPLE = [AL, MO, ROOT, GUEST, CREW, BOUND_MOD, actor("user:al", "admin")]
KEYS = ["mods.a", "crew.a", "plain.a", "vault.a", "asked.a"]


@pytest.mark.parametrize("key", KEYS)
def test_whoever_may_discard_is_whoever_the_policy_lets_apply(rights: App, key: str) -> None:
    """The same right, by construction: the policy's verdict on applying the proposal, and
    the discard, agree for every person and key."""
    for who in PEOPLE:
        p = agent_proposal(rights, key, "v", asker=None)
        verdict = rights.policy.check(applying(p, who))
        may_apply = verdict.kind is not VerdictKind.REJECT
        try:
            rights.gateway.discard_proposal(p.id, who)
        except DiscardRefused as exc:
            assert not may_apply, (str(who), key, exc.refusal.message)
            assert exc.refusal.reason is verdict.reason
        else:
            assert may_apply, (str(who), key, verdict.message)
