"""What a click came to, as the note the loop and the adapters get: committed, proposed,
rejected or discarded, in the words of ``core.deliberation.sentences``."""

from __future__ import annotations

from core.deliberation import sentences as say
from core.deliberation.memory import ProposalRef
from core.deliberation.messages import OutcomeNote
from core.gateway.edits import MAX_EDIT_CHARS, value_text
from core.gateway.outcome import (
    SECRET,
    Outcome,
    Pending,
    Proposal,
    ProposalStatus,
    approvals_message,
    denials_note,
    expired_message,
)
from core.gateway.policy import Policy
from core.state.actor import Actor
from core.state.commit_result import Committed, Rejected, RejectReason
from core.state.mutation import Op
from core.time_phrases import moment_text

__all__ = ["SECRET", "discard_note", "note_for", "note_under"]


def note_under(policy: Policy, outcome: Outcome) -> OutcomeNote:
    """``note_for`` as the key's policy has it (protected, secret)."""
    key = outcome.mutation.key
    rule = policy.rule_for(key)
    if rule is None:
        return note_for(outcome)
    glass = policy.break_glass(key)
    role = None if glass is None else glass.role
    return note_for(outcome, protected=rule.protected, secret=rule.secret, glass_role=role)


def note_for(
    outcome: Outcome,
    protected: bool = False,
    secret: bool = False,
    glass_role: str | None = None,
) -> OutcomeNote:
    """``protected``: the key is (a proposal's Apply asks to confirm); ``secret``: its
    values are never shown in chat nor kept in the session; ``glass_role``: the role that may
    break the glass on it (a proposal's Apply offers it)."""
    # (of a commit, what was asked: its mutation stamped with the commit's time is a copy
    # made on first use, and a note reads nothing of that time)
    m = outcome.request if isinstance(outcome, Committed) else outcome.mutation
    if isinstance(outcome, Committed):
        shown = SECRET if secret and m.value is not None else m.value
        reverts = outcome.reverts_at
        # (how far off, counted from the commit: a repeated click's commit is an old one)
        now = None if outcome.duplicate else outcome.ts
        until = None if reverts is None else moment_text(reverts, now)
        message = say.committed(m.op.value, m.key, shown, outcome.version, outcome.duplicate, until)
        glass = m.meta.get("breakGlass")
        if isinstance(glass, dict):
            message = say.broke_glass(message, str(glass.get("reason", "")))
        return OutcomeNote(
            outcome="committed",
            message=message,
            key=m.key,
            value=None if secret else m.value,
            version=outcome.version,
            duplicate=outcome.duplicate,
            by=str(m.actor),
            mutation_id=m.id,
            reverts_at=reverts,
        )
    if isinstance(outcome, Pending):
        p = outcome.proposal
        summary = p.summary(secret)
        message = say.proposed(summary)
        if p.approvals:
            message = f"{summary}: {approvals_message(p)}"
        text = "" if secret else value_text(p.current_value)
        waiting = ProposalRef(
            id=p.id,
            summary=summary[:300],
            protected=protected,
            value=text if len(text) <= MAX_EDIT_CHARS else "",
            editable=m.op is not Op.DELETE,
            revision=p.revision,
            break_glass=glass_role,
            expires_at=p.expires_at,
            for_sec=m.for_sec,
        )
        return OutcomeNote(outcome="pending", message=message, key=m.key, waiting=waiting)
    assert isinstance(outcome, Rejected)
    message = outcome.message
    latest = outcome.latest
    if outcome.reason is RejectReason.CONFLICT and latest is not None:
        # people see what is there instead (the gateway never hands an agent a secret)
        shown = SECRET if secret and latest.value is not None else latest.value
        message = say.conflict(m.key, shown, latest.version, str(latest.updated_by))
    return OutcomeNote(
        outcome="rejected",
        message=message,
        key=m.key,
        reason=outcome.reason.value,
        version=outcome.version,
        expired_at=outcome.deadline,
    )


def discard_note(
    proposal: Proposal, actor: Actor, secret: bool = False, now_ms: int | None = None
) -> OutcomeNote:
    """What a discard came to: done, or why not (applied meanwhile, being applied, or past
    its deadline: nothing to discard; how long ago by the server's ``now_ms``, when
    known)."""
    if proposal.status is ProposalStatus.EXPIRED and proposal.expires_at is not None:
        deadline = proposal.expires_at
        message = expired_message(deadline, now_ms)
        return OutcomeNote(
            outcome="rejected", message=message, reason="expired", expired_at=deadline
        )
    if proposal.status is ProposalStatus.PENDING and proposal.denied_by(actor):
        message = say.denied(proposal.summary(secret)) + denials_note(proposal)
        return OutcomeNote(outcome="pending", message=message, key=proposal.mutation.key)
    if proposal.status is ProposalStatus.PENDING:  # an apply was under way, then refused
        return OutcomeNote(outcome="rejected", message=say.applying_now(), reason="busy")
    if proposal.status is not ProposalStatus.DISCARDED:
        by = str(proposal.resolved_by) if proposal.resolved_by else None
        message = say.already_resolved(proposal.status, by)
        return OutcomeNote(outcome="rejected", message=message, reason="resolved")
    summary = proposal.summary(secret)
    message = say.discarded(summary)
    if proposal.reason:
        message += f" ({proposal.reason})"
    return OutcomeNote(outcome="discarded", message=message, by=str(actor), proposal=summary[:200])
