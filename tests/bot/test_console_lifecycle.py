"""The decision lifecycle in the console, as a person types it: a proposal's Edit button is
clicked with ``/edit N VALUE``, its Discard button with ``/reject N REASON`` (or its number
alone), "Undo" by its number; an expired proposal is refused; an approval that is not the
last says where the proposal stands. Real Redis, the offline loop; proposals come from a
person's own write on a key whose policy says ``approval: {people: true}``."""

from __future__ import annotations

import dataclasses
import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from bot.console import HELP, Console
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import ProposalStatus
from tests.conftest import write_config
from tests.factories import actor, mutation

IDEA = "how about postgres with read replicas"
KEY = "decision.postgres-read-replicas"


def approval_config(tmp_path: Path, approval: str, pattern: str = '"decision.*"') -> Path:
    """The shipped config, with ``approval: APPROVAL`` on the key rule ``pattern``."""
    text = files("core.config").joinpath("default.yaml").read_text(encoding="utf-8")
    rule = f"    - pattern: {pattern}\n"
    assert text.count(rule) == 1, rule
    return write_config(tmp_path, text.replace(rule, f"{rule}      approval: {approval}\n"))


@pytest.fixture
def team(tmp_path: Path, redis_client: Redis, workspace: str) -> App:
    """A person's "Use this" on a decision waits for one approver."""
    return build_app(workspace, approval_config(tmp_path, "{people: true}"), client=redis_client)


def console(app: App, who: str, *, as_json: bool = False) -> tuple[Console, list[str]]:
    said: list[str] = []
    runtime = app.runtime(use_env=False)
    return Console(runtime, "s1", actor(who), said.append, as_json=as_json), said


def events(said: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in said]


def numbers(said: list[str]) -> dict[str, int]:
    """The number of each action's button in the last view shown (JSON events)."""
    view = [e for e in events(said) if "buttons" in e][-1]
    return {b["action"]: b["n"] for b in view["buttons"]}


def looking(app: App, who: str) -> tuple[Console, list[str], dict[str, int]]:
    """A console of ``who``'s own (its own button numbers) that has shown what is on the
    table: the number of each action's button there."""
    person, said = console(app, who)
    person.handle("/show")
    return person, said, {b.action: person.numbers.of(b) for b in person.buttons}


def propose(app: App, who: str = "user:alice") -> tuple[Console, list[str], dict[str, int]]:
    """``who`` says the idea and clicks "Use this": a proposal waits, with its buttons."""
    alice, said = console(app, who, as_json=True)
    alice.handle(IDEA)
    alice.handle(str(numbers(said)["ConfirmCurrent"]))
    assert [e["event"] for e in events(said)][-2:] == ["pending", "outcome"]
    return alice, said, numbers(said)


def only_proposal(app: App) -> str:
    [proposal] = app.gateway.proposals.listed(resolved=True)
    return proposal.id


def test_an_expired_proposal_is_refused_and_nothing_changes(team: App) -> None:
    due = dataclasses.replace(
        team, gateway=MutationGateway(team.store, team.policy, proposal_expiry_ms=0)
    )
    alice, said, shown = propose(due)
    said.clear()
    alice.handle(str(shown["ApplyProposal"]))
    refused = events(said)[0]
    assert refused["event"] == "rejected" and refused["reason"] == "expired"
    assert refused["message"].startswith("this proposal expired at ")
    assert refused["message"].endswith("; nothing was changed")
    assert "Not done: this proposal expired at" in said[-1]
    proposal = team.gateway.proposals.get(only_proposal(team))
    assert proposal is not None and proposal.status is ProposalStatus.EXPIRED
    assert team.store.version(KEY) == 0 and len(team.log) == 0


def test_edit_commits_the_edited_value_and_the_log_keeps_both(team: App) -> None:
    propose(team)
    bob, said, shown = looking(team, "user:bob")
    edit, apply = shown["EditProposal"], shown["ApplyProposal"]
    bob.handle(str(edit))  # a bare number: Edit needs the new value
    assert said[-1] == (
        f"! Edit asks for the new value: type /edit {edit} VALUE "
        "(proposed: 'postgres with read replicas')"
    )
    bob.handle(f"/edit {edit}")
    assert said[-1] == said[-2] and team.store.version(KEY) == 0
    bob.handle(f"/edit {apply} postgres 16")
    assert said[-1].startswith(f'! button {apply} is "Apply: set {KEY}') and "not Edit" in said[-1]
    bob.handle("/edit 99 postgres")
    assert said[-1].startswith("! no button 99 is shown (a value that starts with a number")
    bob.handle(f"/edit {edit} postgres 16 with read replicas")
    assert said[-1].startswith(
        f'assistant: Committed: set {KEY} "postgres 16 with read replicas" (v1) (by user:bob)'
    )
    [record] = team.log.latest(5)
    meta = record.mutation.meta
    assert record.mutation.value == "postgres 16 with read replicas"
    assert (meta["proposedValue"], meta["editedBy"]) == ("postgres with read replicas", "user:bob")
    proposal = team.gateway.proposals.get(only_proposal(team))
    assert proposal is not None and proposal.status is ProposalStatus.APPLIED
    assert proposal.edited is not None and str(proposal.edited.by) == "user:bob"


def test_edit_without_a_number_uses_the_one_edit_button_shown(team: App) -> None:
    alice, said, _ = propose(team)
    alice.handle("/edit postgres 17")
    assert [e["event"] for e in events(said)][-2:] == ["committed", "outcome"]
    entry = team.store.get(KEY)
    assert entry is not None and entry.value == "postgres 17"
    alice.handle("/edit postgres 18")  # no Edit button is shown any more
    assert events(said)[-1] == {"event": "error", "message": "no Edit button is shown"}


def test_reject_keeps_the_reason_in_the_proposal_and_in_working_memory(team: App) -> None:
    propose(team)
    bob, said, shown = looking(team, "user:bob")
    bob.handle("/reject 99 too costly")
    assert said[-1].startswith("! no button 99 is shown (a reason that starts with a number")
    bob.handle(f"/reject {shown['DiscardProposal']} too costly for   billing")
    assert said[-1].startswith(
        f"assistant: Discarded proposal: set {KEY} = postgres with read replicas "
        "(too costly for billing)"
    )
    proposal = team.gateway.proposals.get(only_proposal(team))
    assert proposal is not None and proposal.status is ProposalStatus.DISCARDED
    assert proposal.reason == "too costly for billing" and str(proposal.resolved_by) == "user:bob"
    working = team.runtime(use_env=False).sessions.load("s1").working
    assert working.rejected_ideas[-1] == (
        f"set {KEY} = postgres with read replicas (rejected: too costly for billing)"
    )
    assert team.store.version(KEY) == 0
    [row] = [r for r in team.gateway.decisions.recent() if r["outcome"] == "discarded"]
    assert row["reason"] == "too costly for billing" and row["proposal_id"] == proposal.id


def test_the_number_of_discard_alone_discards_without_a_reason(team: App) -> None:
    alice, said, shown = propose(team)
    alice.handle(str(shown["DiscardProposal"]))
    assert [e["event"] for e in events(said)][-2:] == ["discarded", "outcome"]
    proposal = team.gateway.proposals.get(only_proposal(team))
    assert proposal is not None and proposal.status is ProposalStatus.DISCARDED
    assert proposal.reason is None
    assert team.runtime(use_env=False).sessions.load("s1").working.rejected_ideas == []
    alice.handle("/reject")  # nothing left to discard
    assert events(said)[-1] == {"event": "error", "message": "no Discard button is shown"}


def test_undo_by_number_restores_what_was_there(app: App) -> None:
    app.gateway.propose(mutation("set", "scene.name", "Live", "user:sam"))
    alice, said = console(app, "user:alice")
    alice.handle("how about BRB?")
    alice.handle("/do SwitchScene")
    assert said[-1].startswith('assistant: Committed: set scene.name "BRB" (v2) (by user:alice)')
    undo = said[-1].splitlines()[-1].rsplit("[", 1)[-1]
    assert undo.endswith("] Undo")
    alice.handle(undo.split("]")[0])
    assert said[-1].startswith('assistant: Committed: set scene.name "Live" (v3) (by user:alice)')
    entry = app.store.get("scene.name")
    assert entry is not None and (entry.value, entry.version) == ("Live", 3)
    reverted = app.log.latest(1)[0].mutation
    assert reverted.meta["reverts"] == app.log.latest(2)[0].mutation.id
    alice.handle(undo.split("]")[0])  # offered no more: refused as stale, nothing done
    assert "is no longer offered: nothing was done" in said[-1]
    assert app.store.version("scene.name") == 3


def test_an_approval_that_is_not_the_last_says_where_it_stands(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    path = approval_config(tmp_path, "{people: true, quorum: 2, four_eyes: true}")
    app = build_app(workspace, path, client=redis_client)
    propose(app)
    alice, said_a, shown = looking(app, "user:alice")
    alice.handle(str(shown["ApplyProposal"]))
    assert "Not done: user:alice asked for this change: someone else must approve it" in said_a[-1]
    bob, said_b, shown = looking(app, "user:bob")
    bob.handle(str(shown["ApplyProposal"]))
    assert said_b[-1].startswith(
        f"assistant: set {KEY} = postgres with read replicas: approved by user:bob (1 of 2); "
        "awaits 1 more approval (by user:bob)"
    )
    assert app.store.version(KEY) == 0
    carol, said_c, shown = looking(app, "user:carol")
    carol.handle(str(shown["ApplyProposal"]))
    assert said_c[-1].startswith(f'assistant: Committed: set {KEY} "postgres with read replicas"')
    approvers = app.log.latest(1)[0].mutation.meta["approvedBy"]
    assert approvers == ["user:bob", "user:carol"]


def test_help_lists_edit_and_reject(app: App) -> None:
    alice, said = console(app, "user:alice")
    alice.handle("/help")
    assert said == [HELP]
    assert "/edit [N] VALUE" in HELP and "/reject [N] [REASON]" in HELP and "Undo" in HELP
    alice.handle("/do EditProposal")
    assert said[-1] == "! an edit needs the new value: /edit VALUE"


def test_a_rule_waits_for_a_moderator_and_two_denials_end_it(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    rule = 'approvals.exists(a, "moderator" in a.roles)'
    path = approval_config(tmp_path, f"{{people: true, four_eyes: true, when: '{rule}'}}")
    app = build_app(workspace, path, client=redis_client)
    propose(app)
    bob, said_b, shown = looking(app, "user:bob")
    bob.handle(str(shown["ApplyProposal"]))  # a member: counted, the rule not met
    assert said_b[-1].startswith(
        f"assistant: set {KEY} = postgres with read replicas: approved by user:bob (1 of 1); "
        f"awaits approvals meeting {rule}"
    )
    bob.handle(str(shown["ApplyProposal"]))  # twice: still once
    assert app.store.version(KEY) == 0
    mo, said_m, shown = looking(app, "moderator:mo")
    mo.handle(str(shown["ApplyProposal"]))
    assert said_m[-1].startswith(f'assistant: Committed: set {KEY} "postgres with read replicas"')
    assert app.log.latest(1)[0].mutation.meta["approvedBy"] == ["user:bob", "moderator:mo"]


def test_a_denial_under_deny_at_keeps_it_waiting(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    app = build_app(
        workspace, approval_config(tmp_path, "{people: true, deny_at: 2}"), client=redis_client
    )
    propose(app)
    bob, said_b, shown = looking(app, "user:bob")
    bob.handle(f"/reject {shown['DiscardProposal']} not yet")
    assert said_b[-1].startswith(
        f"assistant: Denied proposal: set {KEY} = postgres with read replicas; "
        "denied by user:bob (1 of 2 that end it)"
    )
    carol, said_c, shown = looking(app, "user:carol")
    carol.handle(f"/reject {shown['DiscardProposal']} no")
    assert said_c[-1].startswith(
        f"assistant: Discarded proposal: set {KEY} = postgres with read replicas (not yet; no)"
    )
    proposal = app.gateway.proposals.get(only_proposal(app))
    assert proposal is not None and proposal.status is ProposalStatus.DISCARDED
