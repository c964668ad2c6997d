"""Applying a proposal, as pure functions: the mutation an approver's click would commit
(its value as edited, version-checked against the version the proposal was made against,
its approvers, editor and proposed value in its ``meta``), and why a click is refused before
anything is counted (an agent, a guest, a discarded or stale proposal, four eyes, an edit
made since the approver saw it)."""

from __future__ import annotations

from pydantic import JsonValue

from core.gateway.edits import Edit
from core.gateway.outcome import Proposal, ProposalStatus, stale_message
from core.gateway.policy import GuestPolicy
from core.gateway.secrecy import Secrecy
from core.state.actor import Actor, ActorKind
from core.state.commit_result import Rejected, RejectReason
from core.state.mutation import Mutation

__all__ = ["applying", "edited_since", "moved_on", "refuse_apply"]


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
    if not proposal.four_eyes:
        return None
    requester, editor = proposal.requested_by, proposal.edited
    if requester is not None and requester.identity == actor.identity:
        return Rejected(
            mutation,
            RejectReason.FORBIDDEN,
            f"{actor} asked for this change: someone else must approve it",
        )
    if editor is not None and editor.by.identity == actor.identity:
        return Rejected(
            mutation,
            RejectReason.FORBIDDEN,
            f"{actor} edited this change: someone else must approve the new value",
        )
    return None


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
