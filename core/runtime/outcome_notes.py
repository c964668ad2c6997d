"""What a person reads about a click's outcome: the sentence for a commit, a rejection, a
proposal made or discarded, written here once for every adapter (Slack, Discord, the console
and ``--json`` show the same words)."""

from __future__ import annotations

import json

from pydantic import JsonValue

from core.deliberation.messages import OutcomeNote
from core.gateway.outcome import Outcome, Pending, Proposal, ProposalStatus
from core.state.actor import Actor
from core.state.commit_result import Committed, Rejected, RejectReason

__all__ = ["discard_note", "note_for"]


def note_for(outcome: Outcome) -> OutcomeNote:
    m = outcome.mutation
    if isinstance(outcome, Committed):
        shown = "" if m.value is None else f" {_short(m.value)}"
        again = " (already committed)" if outcome.duplicate else ""
        return OutcomeNote(
            outcome="committed",
            message=f"Committed: {m.op.value} {m.key}{shown} (v{outcome.version}){again}",
            key=m.key,
            value=m.value,
            version=outcome.version,
            duplicate=outcome.duplicate,
            by=str(m.actor),
        )
    if isinstance(outcome, Pending):
        return OutcomeNote(
            outcome="pending",
            message=f"Proposed: {outcome.proposal.summary()}; awaits a person with the right role",
            key=m.key,
        )
    assert isinstance(outcome, Rejected)
    message = outcome.message
    latest = outcome.latest
    if outcome.reason is RejectReason.CONFLICT and latest is not None:
        # people see what is there instead (the gateway never hands an agent a secret)
        message = (
            f"{m.key} was changed elsewhere: it is {_short(latest.value)} "
            f"(v{latest.version}, by {latest.updated_by})"
        )
    return OutcomeNote(
        outcome="rejected",
        message=message,
        key=m.key,
        reason=outcome.reason.value,
        version=outcome.version,
    )


def _short(value: JsonValue, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def discard_note(proposal: Proposal, actor: Actor) -> OutcomeNote:
    """What a discard came to: done, or why not (applied meanwhile, or being applied)."""
    if proposal.status is ProposalStatus.PENDING:  # an apply was under way, then refused
        message = "someone was applying this proposal just now; try again"
        return OutcomeNote(outcome="rejected", message=message, reason="busy")
    if proposal.status is not ProposalStatus.DISCARDED:
        by = f" by {proposal.resolved_by}" if proposal.resolved_by else ""
        message = f"this proposal was already {proposal.status}{by}"
        return OutcomeNote(outcome="rejected", message=message, reason="resolved")
    return OutcomeNote(
        outcome="discarded",
        message=f"Discarded proposal: {proposal.summary()}",
        by=str(actor),
    )
