"""Applying a proposal, as pure functions: what an approval or a denial makes of it (one
person counts once, either way; four eyes bars who asked for it and who edited it, checked on
the proposal as it is where the approval is counted), the mutation an approver's click would
commit (its value as edited, version-checked against the version the proposal was made
against, its approvers, editor and proposed value in its ``meta``), and why a click is
refused before anything is counted (an agent, a guest, a discarded or stale proposal, four
eyes, an edit made since the approver saw it, no revision named)."""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue

from core.errors import DeliberateError
from core.gateway.approval_rule import ApprovalRule, rule_met
from core.gateway.edits import Edit
from core.gateway.outcome import (
    Approval,
    Denial,
    Proposal,
    ProposalStatus,
    requester,
    stale_message,
)
from core.gateway.policy import GuestPolicy
from core.gateway.secrecy import Secrecy
from core.state.actor import Actor, ActorKind
from core.state.commit_result import Rejected, RejectReason
from core.state.mutation import Mutation

__all__ = [
    "Barred",
    "applying",
    "barred",
    "counted",
    "denied",
    "edited_since",
    "glass_claim",
    "glass_flagged",
    "moved_on",
    "no_revision",
    "proposal_of",
    "refuse_apply",
    "resolved",
]


class Barred(DeliberateError):
    """An approval, an edit or a take-over that four eyes bars, found where it was to be
    counted: ``proposal`` as it was there."""

    def __init__(self, why: str, proposal: Proposal) -> None:
        super().__init__(why)
        self.proposal = proposal


def barred(p: Proposal, by: Actor) -> str | None:
    """Why four eyes bars ``by`` from approving, editing or taking over ``p`` as it is now:
    they asked for it, or made its last edit (they asked for that value); None when nothing
    bars them, or ``p`` needs no four eyes."""
    if not p.four_eyes:
        return None
    if p.requested_by is not None and p.requested_by.identity == by.identity:
        return f"{by} asked for this change: someone else must approve it"
    if p.edited is not None and p.edited.by.identity == by.identity:
        return f"{by} edited this change: someone else must approve the new value"
    return None


def counted(
    p: Proposal, by: Actor, edit: Edit | None, now: int, reason: str | None = None
) -> Proposal | None:
    """``p`` with ``by``'s approval counted (with ``edit``: the new value, which only ``by``
    has approved so far, or nobody under four eyes: the editor asked for it), claimed for
    ``by`` (applied) once its approvals reach its quorum and meet its rule; None when ``by``
    approved it already. An approval takes back ``by``'s denial: one person, one voice.
    ``reason``: why they approve, kept with the approval. ``Barred`` when four eyes bars
    ``by`` from ``p`` as it is here (whatever a copy read before said)."""
    if (why := barred(p, by)) is not None:
        raise Barred(why, p)
    approval = Approval(by=by, at=now, reason=reason)
    denials = [d for d in p.denials if d.by.identity != by.identity]
    update: dict[str, Any]
    if edit is not None:
        update = {
            "approvals": [] if p.four_eyes else [approval],
            "edited": approval,
            "value": edit.value,
            "revision": p.revision + 1,
            "denials": denials,
        }
    elif p.approved_by(by):
        return None
    else:
        update = {"approvals": [*p.approvals, approval], "denials": denials}
    counted_in = p.model_copy(update=update)
    approvals = counted_in.approvals
    if approvals and len(approvals) >= p.quorum and rule_met(counted_in):
        return resolved(counted_in, ProposalStatus.APPLIED, by, now)
    return counted_in


def denied(p: Proposal, by: Actor, reason: str | None, now: int) -> Proposal:
    """``p`` discarded by ``by``, keeping ``reason``: at once where its key has no
    ``deny_at``, or when ``by`` asked for it (they withdraw it); else ``by``'s denial is
    counted (once: a second replaces their first, and it takes back their approval), and
    the ``deny_at``-th distinct one discards it, with the reasons given."""
    asked = p.requested_by is not None and p.requested_by.identity == by.identity
    if p.deny_at is None or asked:
        return resolved(p, ProposalStatus.DISCARDED, by, now).model_copy(update={"reason": reason})
    denials = [d for d in p.denials if d.by.identity != by.identity]
    denials.append(Denial(by=by, at=now, reason=reason))
    approvals = [a for a in p.approvals if a.by.identity != by.identity]
    moved = p.model_copy(update={"denials": denials, "approvals": approvals})
    if len(denials) < p.deny_at:
        return moved
    reasons = "; ".join(d.reason for d in denials if d.reason) or None
    return resolved(moved, ProposalStatus.DISCARDED, by, now).model_copy(update={"reason": reasons})


def proposal_of(mutation: Mutation, rule: ApprovalRule, base_version: int) -> Proposal:
    """The proposal ``mutation`` becomes: approved as ``rule`` (its key's) says, made against
    ``base_version``, asked for by the person whose write waits, or whose turn led the model
    to propose it."""
    return Proposal(
        id=mutation.id,
        mutation=mutation,
        requested_by=mutation.actor if mutation.actor.is_person else requester(mutation),
        base_version=base_version,
        quorum=rule.quorum,
        four_eyes=rule.four_eyes,
        approve_when=rule.when,
        deny_at=rule.deny_at,
        escalate=rule.escalate,
    )


def resolved(p: Proposal, to: ProposalStatus, by: Actor | None, now: int) -> Proposal:
    """``p`` moved to ``to`` by ``by`` at ``now`` (back to pending: held by nobody)."""
    at = None if to is ProposalStatus.PENDING else now
    return p.model_copy(update={"status": to, "resolved_by": by, "resolved_at": at})


def applying(
    proposal: Proposal,
    actor: Actor,
    expected_version: int | None = None,
    edit: Edit | None = None,
    verb: str = "apply",
) -> Mutation:
    """The proposed mutation as ``actor`` would commit it by clicking ``verb``: with its
    value as edited (``edit``, else the proposal's), version-checked against the version it
    was made against, and its approvers, editor and proposed value in its ``meta``."""
    proposed = proposal.mutation
    meta = dict(proposed.meta)
    meta["proposal"] = proposal.id
    if proposal.requested_by is not None:
        meta["requestedBy"] = str(proposal.requested_by)
    approvers: list[JsonValue] = [str(a.by) for a in proposal.approvals]
    if approvers:
        meta["approvedBy"] = approvers
    value = proposal.current_value if edit is None else edit.value
    editor = actor if edit is not None else (proposal.edited.by if proposal.edited else None)
    if editor is not None:
        meta.update(editedBy=str(editor), proposedValue=proposed.value)
    if expected_version is None:
        expected_version = proposed.expected_version
    if expected_version is None:
        expected_version = proposal.base_version
    return proposed.with_changes(
        id=f"{verb}-{proposal.id}",
        actor=actor,
        value=value,
        proposed_by=proposed.actor,
        causation_id=proposed.id,
        expected_version=expected_version,
        meta=meta,
    )


def glass_flagged(mutation: Mutation, actor: Actor, reason: str) -> Mutation:
    """``mutation`` flagged as a break-glass change by ``actor``, for ``reason``."""
    glass: dict[str, JsonValue] = {"by": str(actor), "reason": reason}
    return mutation.with_changes(meta={**mutation.meta, "breakGlass": glass})


def glass_claim(proposal: Proposal) -> Mutation | None:
    """The mutation whoever claimed ``proposal`` by breaking the glass commits (None: it was
    not claimed so): another approver's click looks for it, not for their own."""
    by, reason = proposal.resolved_by, proposal.break_glass
    if proposal.status is not ProposalStatus.APPLIED or by is None or reason is None:
        return None
    return glass_flagged(applying(proposal, by, verb="breakglass"), by, reason)


def moved_on(outcome: Rejected, mutation: Mutation) -> bool:
    """A commit refused because the key is no longer at the version it expected."""
    return outcome.reason is RejectReason.CONFLICT and mutation.expected_version is not None


def refuse_apply(
    proposal: Proposal, mutation: Mutation, actor: Actor, guests: GuestPolicy
) -> Rejected | None:
    if actor.kind is ActorKind.AGENT:
        return Rejected(mutation, RejectReason.FORBIDDEN, "an agent cannot apply a proposal")
    if actor.kind is ActorKind.GUEST and not guests.apply:
        return Rejected(
            mutation,
            RejectReason.FORBIDDEN,
            f"{actor} is a guest here: guests may talk, not apply proposals",
        )
    if proposal.status is ProposalStatus.DISCARDED:
        by = proposal.resolved_by
        return Rejected(
            mutation,
            RejectReason.NOT_FOUND,
            f"this proposal was discarded{f' by {by}' if by else ''}",
        )
    if proposal.status is ProposalStatus.STALE:
        return Rejected(mutation, RejectReason.STALE, stale_message(mutation, None))
    why = barred(proposal, actor)  # (on this copy; counted() checks again where it counts)
    return None if why is None else Rejected(mutation, RejectReason.FORBIDDEN, why)


def no_revision(mutation: Mutation) -> Rejected:
    """An approval that does not say which revision of the proposal (which value) its
    approver saw: refused, as it could approve a value they never saw."""
    return Rejected(
        mutation,
        RejectReason.CONFLICT,
        "this approval names no revision of the proposal (the value you saw); "
        "nothing was changed: reload it and click again",
    )


def edited_since(
    proposal: Proposal, mutation: Mutation, revision: int, secrecy: Secrecy
) -> Rejected | None:
    """An approval of a value the proposal no longer has: refused, naming the new one (a
    secret key's masked)."""
    if proposal.revision == revision:
        return None
    by = f" by {proposal.edited.by}" if proposal.edited is not None else ""
    now = proposal.summary(secrecy.is_secret(proposal.mutation.key))
    return Rejected(
        mutation,
        RejectReason.CONFLICT,
        f"this proposal was edited{by} since you saw it: it now reads {now}; nothing was changed",
    )
