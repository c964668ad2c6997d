"""Breaking the glass in the console: ``/breakglass N REASON`` clicks a proposal's Apply
button N as an ``ApplyProposal`` click carrying ``break_glass`` (the click path Slack and
Discord share), which the runtime applies at once through ``BreakGlass.apply``. Real Redis,
the offline loop. The attacks: no reason, no role, another button's number, a click for
another action carrying a reason, and a proposal edited since the button was shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from redis import Redis

from bot.app import App, build_app
from bot.console import Console
from core.deliberation.messages import ActionClicked
from core.gateway.break_glass import BreakGlass
from core.gateway.outcome import ProposalStatus
from tests.bot.test_console_lifecycle import (
    KEY,
    approval_config,
    only_proposal,
    propose,
)
from tests.factories import actor

INA = actor("user:ina", "oncall")  # the tenant binds the role


@pytest.fixture
def team(tmp_path: Path, redis_client: Redis, workspace: str) -> App:
    """Two approvers, four eyes; the oncall role may break the glass."""
    approval = "{people: true, quorum: 2, four_eyes: true, break_glass: {role: oncall}}"
    return build_app(workspace, approval_config(tmp_path, approval), client=redis_client)


def looking_as(app: App, who: str, *roles: str) -> tuple[Console, list[str], dict[str, int]]:
    said: list[str] = []
    person = Console(app.runtime(use_env=False), "s1", actor(who, *roles), said.append)
    person.handle("/show")
    return person, said, {b.action: person.numbers.of(b) for b in person.buttons}


def test_the_role_applies_at_once_and_the_outcome_says_it_broke_the_glass(team: App) -> None:
    propose(team)
    ina, said, shown = looking_as(team, "user:ina", "oncall")
    ina.handle(f"/breakglass {shown['ApplyProposal']}   stream   is down ")
    assert said[-1].startswith(
        f'assistant: Break-glass apply. Committed: set {KEY} "postgres with read replicas" '
        "(v1); reason: stream is down (by user:ina)"
    )
    proposal = team.gateway.proposals.get(only_proposal(team))
    assert proposal is not None and proposal.status is ProposalStatus.APPLIED
    assert proposal.break_glass == "stream is down" and proposal.resolved_by == INA
    [record] = team.log.latest(5)
    assert record.mutation.meta["breakGlass"] == {"by": "user:ina", "reason": "stream is down"}
    [listed] = BreakGlass(team.gateway).listed()
    assert listed["proposal"] == proposal.id and listed["reason"] == "stream is down"
    ina.handle(f"/breakglass {shown['ApplyProposal']} again")  # no longer offered
    assert "is no longer offered: nothing was done" in said[-1]
    assert team.store.version(KEY) == 1


@pytest.mark.parametrize("reason", ["", "    ", " \u200b\u2060"])  # (invisible)
def test_without_a_reason_nothing_is_sent(team: App, reason: str) -> None:
    propose(team)
    ina, said, shown = looking_as(team, "user:ina", "oncall")
    ina.handle(f"/breakglass {shown['ApplyProposal']}{reason}")
    assert said[-1] == (
        "! breaking the glass needs a reason, said with it: type /breakglass N REASON "
        "(N: the proposal's Apply button); nothing was changed"
    )
    ina.handle("/breakglass outage")  # no number
    assert said[-1].startswith("! type /breakglass N REASON")
    proposal = team.gateway.proposals.get(only_proposal(team))
    assert proposal is not None and proposal.status is ProposalStatus.PENDING
    assert team.store.version(KEY) == 0


def test_without_the_role_it_is_refused_and_recorded(team: App) -> None:
    propose(team)
    bob, said, shown = looking_as(team, "user:bob")
    bob.handle(f"/breakglass {shown['ApplyProposal']} I am sure")
    assert said[-1].startswith(
        "  (only you) Not done: user:bob does not hold the oncall role: only it may break the "
        f"glass on {KEY}; nothing was changed"
    )
    proposal = team.gateway.proposals.get(only_proposal(team))
    assert proposal is not None and proposal.status is ProposalStatus.PENDING
    assert proposal.break_glass is None and team.store.version(KEY) == 0
    [row] = [r for r in team.gateway.decisions.recent() if r["outcome"] == "rejected"]
    assert row["proposal_id"] == proposal.id
    assert BreakGlass(team.gateway).listed(reviewed=True) == []


def test_only_an_apply_button_breaks_the_glass(team: App) -> None:
    propose(team)
    ina, said, shown = looking_as(team, "user:ina", "oncall")
    ina.handle(f"/breakglass {shown['DiscardProposal']} outage")
    assert said[-1].startswith(f'! button {shown["DiscardProposal"]} is "Discard')
    assert said[-1].endswith("not a proposal's Apply")
    ina.handle("/breakglass 99 outage")
    assert said[-1] == "! no button 99 is shown"
    with pytest.raises(ValidationError, match="only ApplyProposal breaks the glass"):
        ActionClicked(
            action="DiscardProposal",
            target_id="p1",
            expected_version=0,
            click_id="c1",
            actor=INA,
            break_glass="outage",
        )
    assert team.store.version(KEY) == 0


def test_a_blank_reason_from_a_platform_is_refused_by_the_gateway(team: App) -> None:
    """An adapter that sends the click with an empty reason: refused, nothing changed."""
    propose(team)
    runtime = team.runtime(use_env=False)
    click = ActionClicked(
        action="ApplyProposal",
        target_id=only_proposal(team),
        expected_version=0,
        click_id="slack-1",
        actor=INA,
        break_glass="   ",
    )
    runtime.send("s1", click)
    proposal = team.gateway.proposals.get(only_proposal(team))
    assert proposal is not None and proposal.status is ProposalStatus.PENDING
    assert team.store.version(KEY) == 0
    [row] = [r for r in team.gateway.decisions.recent() if r["outcome"] == "rejected"]
    assert "breaking the glass needs a reason" in row["message"]


def test_an_edit_made_since_the_button_was_shown_refuses_it(team: App) -> None:
    propose(team)
    ina, said, shown = looking_as(team, "user:ina", "oncall")  # revision 0 shown
    bob, _, shown_b = looking_as(team, "user:bob")
    bob.handle(f"/edit {shown_b['EditProposal']} sqlite")  # four eyes: waits for two more
    proposal = team.gateway.proposals.get(only_proposal(team))
    assert proposal is not None and proposal.revision == 1
    ina.handle(f"/breakglass {shown['ApplyProposal']} outage")
    assert "Not done: this proposal was edited by user:bob since you saw it" in said[-1]
    proposal = team.gateway.proposals.get(only_proposal(team))
    assert proposal is not None and proposal.status is ProposalStatus.PENDING
    assert team.store.version(KEY) == 0
