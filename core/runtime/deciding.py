"""A person's decision on a proposal, wherever they made it: a click in a conversation, the
web Inbox or the command line. They approve it (with an edit: a value of their own), reject
it (a denial, where its key counts them) or break the glass (applied at once), through the
gateway and its checks alike (roles, quorum, four eyes, the revision they saw, the
break-glass role and reason), and hear what it came to in the words a click's outcome is
said in (``OutcomeNote``). And an "Undo" clicked under a change a click made."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from core.deliberation.actions import ActionType
from core.deliberation.commands import ResolveProposal
from core.deliberation.messages import ActionClicked, OutcomeNote
from core.errors import DeliberateError
from core.gateway.break_glass import BreakGlass
from core.gateway.edits import Edit, edited_value
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import DiscardRefused, ProposalStatus, UnknownProposal
from core.gateway.reverts import Planned, Revert, planned_known, planned_revert
from core.runtime.outcome_notes import discard_note, note_under
from core.state.actor import Actor
from core.state.limits import Unacknowledged
from core.state.mutation_log import LogRecord

__all__ = [
    "UNDO_SCAN",
    "Decision",
    "Verb",
    "clicked_decision",
    "clicked_undo",
    "decide",
    "known_undo",
    "planned_undo",
]

UNDO_SCAN = 10_000  # the newest log records an "Undo" click looks in for what it undoes


class Verb(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"
    BREAK_GLASS = "breakglass"


@dataclass(frozen=True)
class Decision:
    """``revision``: the edit of the proposal the person saw (an approval and a break-glass
    name it; None is refused, as it could approve a value they never saw). ``reason``: why
    (a break-glass needs one; a rejection and an approval keep theirs). ``edit``: an
    approval's value of their own."""

    proposal_id: str
    actor: Actor
    verb: Verb
    revision: int | None = None
    reason: str | None = None
    edit: Edit | None = None


def decide(gateway: MutationGateway, decision: Decision) -> OutcomeNote:
    """What ``decision`` came to: committed, still waiting (with the approvals so far),
    discarded, or refused and why (recorded by the gateway; nothing changed). Raises
    ``UnknownProposal`` when no proposal has its id, and ``Unacknowledged`` when a commit was
    sent and Redis did not confirm it (applied once or not at all: not a refusal)."""
    d = decision
    try:
        if d.verb is Verb.BREAK_GLASS:
            glass = BreakGlass(gateway)
            broken = glass.apply(d.proposal_id, d.actor, d.reason or "", d.revision)
            return note_under(gateway.policy, broken)
        if d.verb is Verb.APPROVE:
            approved = gateway.apply_proposal(
                d.proposal_id, d.actor, edit=d.edit, revision=d.revision, reason=d.reason
            )
            return note_under(gateway.policy, approved)
        proposal = gateway.discard_proposal(d.proposal_id, d.actor, d.reason)
    except (UnknownProposal, Unacknowledged):
        raise
    except DiscardRefused as exc:  # not theirs to decide: as a refused approval is said
        return note_under(gateway.policy, exc.refusal)
    except DeliberateError as exc:  # (an agent's discard, say)
        return OutcomeNote(outcome="rejected", message=str(exc), reason="forbidden")
    secret = gateway.policy.is_secret(proposal.mutation.key)
    expired = proposal.status is ProposalStatus.EXPIRED  # (said with how long ago)
    now = gateway.proposals.now() if expired else None
    return discard_note(proposal, d.actor, secret, now)


def clicked_decision(gateway: MutationGateway, cmd: ResolveProposal) -> OutcomeNote:
    """What an Apply (an Edit, a break-glass) or a Discard click on a proposal came to."""
    try:
        decision = _decision(gateway, cmd)
        if isinstance(decision, OutcomeNote):
            return decision
        return decide(gateway, decision)
    except UnknownProposal as exc:
        return OutcomeNote(outcome="rejected", message=str(exc), reason="not_found")


def _decision(gateway: MutationGateway, cmd: ResolveProposal) -> Decision | OutcomeNote:
    """What the click decides (an Edit's value read from its note), or why it is no
    decision."""
    click = cmd.click
    target, actor, seen = click.target_id, click.actor, click.expected_version
    if not cmd.apply:
        return Decision(target, actor, Verb.REJECT, reason=click.note)
    if click.break_glass is not None:
        return Decision(target, actor, Verb.BREAK_GLASS, seen, reason=click.break_glass)
    edit = _edit(gateway, click)
    if isinstance(edit, OutcomeNote):
        return edit
    return Decision(target, actor, Verb.APPROVE, seen, edit=edit)


def _edit(gateway: MutationGateway, click: ActionClicked) -> Edit | OutcomeNote | None:
    """The value an EditProposal click gives (None: not an edit), or why it is none."""
    if click.action != ActionType.EDIT_PROPOSAL:
        return None
    proposal = gateway.proposals.get(click.target_id)
    if proposal is None:
        raise UnknownProposal(click.target_id)
    if proposal.status is not ProposalStatus.PENDING:  # nothing to edit any more
        by = f" by {proposal.resolved_by}" if proposal.resolved_by else ""
        message = f"this proposal was already {proposal.status.value}{by}; nothing was changed"
        return OutcomeNote(outcome="rejected", message=message, reason="resolved")
    try:
        return edited_value(proposal.current_value, click.note or "", proposal.mutation.op)
    except ValueError as exc:  # (it never quotes the value)
        return OutcomeNote(outcome="rejected", message=str(exc), reason="schema")


def clicked_undo(gateway: MutationGateway, click: ActionClicked, looked_up: Any) -> OutcomeNote:
    """An "Undo" click: within the time the policy offers it for, and only the mutation it
    was shown under (the version it made). ``looked_up``: what it must know, asked with the
    click's save (None: not asked yet)."""
    planned = planned_undo(gateway, click, looked_up)
    if isinstance(planned, OutcomeNote):
        return planned
    return note_under(gateway.policy, planned.told(gateway.propose(planned.mutation)))


def planned_undo(
    gateway: MutationGateway, click: ActionClicked, looked_up: Any, record: bool = True
) -> Planned | OutcomeNote:
    """``clicked_undo`` up to the revert's proposal: the revert checked, or the note of its
    refusal (in the decision log; ``record`` False: not, ``planned_revert``)."""
    planned = planned_revert(gateway, _undo(gateway, click), looked_up, record)
    return planned if isinstance(planned, Planned) else note_under(gateway.policy, planned)


def known_undo(gateway: MutationGateway, click: ActionClicked, made: LogRecord) -> Planned | None:
    """An "Undo" click of a change this process committed, ``made`` as it heard it: the
    revert checked as far as needs no server, what the server holds left to its commit
    (``planned_known``); None: look it up (``planned_undo``)."""
    return planned_known(_undo(gateway, click), made)


def _undo(gateway: MutationGateway, click: ActionClicked) -> Revert:
    """The revert an "Undo" click asks for: offered for the policy's window."""
    return Revert(
        click.target_id,
        click.actor,
        version=click.expected_version,
        offered_for_ms=gateway.policy.config.undo.window_sec * 1000,
        correlation_id=click.correlation_id,
        scan=UNDO_SCAN,
    )
