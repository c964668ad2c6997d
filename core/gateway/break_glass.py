"""Breaking the glass: a person holding the role a key's policy names (``break_glass.role``)
applies a change at once, skipping the approvals it would wait for (quorum, four eyes,
``when``, ``people``), only with a reason. Their right to write the key, its schema, ttl
and rate limit still hold. The mutation's ``meta`` carries ``breakGlass: {by, reason}``, its
decision is kept in the decision stream, a shipped rule announces it (``announce_break_glass``)
and it waits in a list until someone other than who broke the glass marks it reviewed."""

from __future__ import annotations

import json
from typing import Any

from redis.exceptions import WatchError

from core.errors import DeliberateError
from core.gateway.approving import (
    applying,
    edited_since,
    glass_flagged,
    no_revision,
    refuse_apply,
)
from core.gateway.mutation_gateway import MutationGateway, UnknownProposal
from core.gateway.outcome import Outcome, ProposalStatus, expired_message
from core.gateway.policy import Policy, VerdictKind
from core.redaction import readable
from core.redis.client import watch_broken
from core.state.actor import Actor, ActorKind
from core.state.commit_result import Rejected, RejectReason
from core.state.mutation import Mutation
from core.state.scripts import server_ms
from core.state.streams import id_order

__all__ = ["MAX_GLASS_REASON", "BreakGlass", "ReviewRefused", "may_break_glass"]

MAX_GLASS_REASON = 500  # characters of a break-glass reason that are kept


class ReviewRefused(DeliberateError):
    """A review nobody may make: of an unknown change, or by who broke the glass."""


def may_break_glass(policy: Policy, actor: Actor, key: str) -> bool:
    """Whether ``actor`` holds the role that may break the glass on ``key`` (a person, not a
    guest), as ``BreakGlass.refused`` has it: whom a page offers it to."""
    rule = policy.break_glass(key)
    if rule is None or not actor.is_person or actor.kind is ActorKind.GUEST:
        return False
    return rule.role in actor.effective_roles


class BreakGlass:
    """Break-glass writes and applies through ``gateway``, and their review list."""

    def __init__(self, gateway: MutationGateway) -> None:
        self.gateway = gateway
        self.redis = gateway.store.redis
        self.keys = gateway.store.keys

    def refused(self, mutation: Mutation, actor: Actor, reason: str) -> Rejected | None:
        """Why ``actor`` may not break the glass on ``mutation``'s key with ``reason``, or
        None: the key's policy names no break-glass role, the actor is not a person (a guest
        neither) holding it, or the reason is empty."""
        key = mutation.key
        rule = self.gateway.policy.break_glass(key)
        why: str | None = None
        if rule is None:
            why = f"no break-glass role is configured for {key}"
        elif not actor.is_person or actor.kind is ActorKind.GUEST:
            why = f"{actor} cannot break the glass: a person holding the {rule.role} role must"
        elif rule.role not in actor.effective_roles:
            why = (
                f"{actor} does not hold the {rule.role} role: only it may break the glass on {key}"
            )
        elif not readable(reason):  # (blanks, zero-width, combining characters: no reason)
            why = "breaking the glass needs a reason, said with it"
        if why is None:
            return None
        return Rejected(mutation, RejectReason.FORBIDDEN, f"{why}; nothing was changed")

    def barred(self, proposal_id: str, actor: Actor) -> str | None:
        """Why ``actor`` could not break the glass on the proposal ``proposal_id`` whatever
        reason they gave, or None: it is unknown here, no longer pending, or they do not hold
        the role. What a platform says before asking for the reason; records nothing, and
        ``apply`` checks it all again."""
        proposal = self.gateway.proposals.get(proposal_id)
        if proposal is None:
            return f"{UnknownProposal(proposal_id)}; nothing was changed"
        if proposal.status is ProposalStatus.EXPIRED:
            box = self.gateway.proposals
            return expired_message(box.deadline(proposal), box.now())
        if proposal.status is not ProposalStatus.PENDING:
            by = f" by {proposal.resolved_by}" if proposal.resolved_by else ""
            return f"this proposal was already {proposal.status.value}{by}; nothing was changed"
        refusal = self.refused(proposal.mutation, actor, "(to be said)")
        return None if refusal is None else refusal.message

    def write(self, mutation: Mutation, reason: str) -> Outcome:
        """Commit ``mutation`` at once (where its key's writes would wait for approval too),
        flagged with ``reason``."""
        # (a secret value quoted in it is struck out before anything is cut: ``kept``; what
        # shows nothing is dropped, and a reason of nothing else is none)
        reason = self.gateway.secrecy.redactor(mutation).kept(reason, MAX_GLASS_REASON)
        flagged = glass_flagged(mutation, mutation.actor, reason)
        refusal = self.refused(flagged, mutation.actor, reason)
        gateway = self.gateway
        verdict = gateway.policy.check(flagged)
        if refusal is None and verdict.kind is VerdictKind.REJECT:
            refusal = Rejected(
                verdict.mutation, verdict.reason or RejectReason.FORBIDDEN, verdict.message
            )
        if refusal is not None:
            return self._refuse(refusal)
        outcome = gateway.store.commit(verdict.mutation, verdict.limits)
        gateway.decisions.record(outcome)  # (which lists it for review)
        return gateway.secrecy.outcome(outcome)

    def apply(self, proposal_id: str, actor: Actor, reason: str, revision: int | None) -> Outcome:
        """Apply a pending proposal at once, whatever its approvals, flagged with ``reason``
        (its value as edited; stale past the version it was made against, as any).
        ``revision``: the edit of it the person saw (an edit made since refuses it, checked
        again where it is claimed); None is refused: they must say which value they apply."""
        gateway = self.gateway
        proposal = gateway.proposals.get(proposal_id)
        if proposal is None:
            raise UnknownProposal(proposal_id)
        applied = applying(proposal, actor, verb="breakglass")
        # (a secret key's value quoted in it is struck out: the reason is shown and announced)
        reason = gateway.secrecy.redactor(applied).kept(reason, MAX_GLASS_REASON)
        mutation = glass_flagged(applied, actor, reason)
        if revision is None:  # (first: which value they apply is what they must say)
            return self._refuse(no_revision(mutation), proposal_id=proposal.id)
        unguarded = proposal.model_copy(update={"four_eyes": False})
        refusal = self.refused(mutation, actor, reason) or refuse_apply(
            unguarded, mutation, actor, gateway.policy.config.guests
        )
        if refusal is None and proposal.status is ProposalStatus.EXPIRED:
            return gateway.expired(proposal, mutation)
        if refusal is None and proposal.status is not ProposalStatus.PENDING:
            by = f" by {proposal.resolved_by}" if proposal.resolved_by else ""
            refusal = Rejected(
                mutation,
                RejectReason.NOT_FOUND,
                f"this proposal was already applied{by}; nothing was changed",
            )
        if refusal is None:
            verdict = gateway.policy.check(mutation)  # the right to write the key
            if verdict.kind is VerdictKind.REJECT:
                reject = verdict.reason or RejectReason.FORBIDDEN
                refusal = Rejected(verdict.mutation, reject, verdict.message)
        if refusal is None:
            refusal = edited_since(proposal, mutation, revision, gateway.secrecy)
        if refusal is not None:
            return self._refuse(refusal, proposal_id=proposal.id)
        claimed = gateway.proposals.claim(proposal.id, actor, reason, revision=revision)
        if claimed is None:  # moved meanwhile: refused, as it now is
            return self.apply(proposal_id, actor, reason, revision)
        if claimed.status is ProposalStatus.EXPIRED:
            return gateway.expired(claimed, mutation)
        return gateway.commit_claimed(proposal.id, actor, mutation)  # (listed for review)

    def _refuse(self, refusal: Rejected, **details: Any) -> Rejected:
        self.gateway.decisions.record(refusal, **details)
        told = self.gateway.secrecy.outcome(refusal)
        assert isinstance(told, Rejected)
        return told

    def listed(self, *, reviewed: bool = False) -> list[dict[str, Any]]:
        """The break-glass changes not yet reviewed, oldest first (with ``reviewed``: all)."""
        raws = self.redis.hvals(self.keys.break_glass)
        found = [json.loads(str(raw)) for raw in raws]
        return sorted(
            (r for r in found if reviewed or "reviewedBy" not in r),
            key=lambda r: id_order(r["logId"]),
        )

    def review(self, mutation_id: str, by: Actor) -> dict[str, Any]:
        """Mark the break-glass change ``mutation_id`` reviewed by ``by``, a person other than
        who broke the glass (a second review keeps the first, also when both come at once:
        the mark is written under WATCH of the list)."""
        with self.redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(self.keys.break_glass)
                    raw = pipe.hget(self.keys.break_glass, mutation_id)
                    record = _reviewable(raw, mutation_id, by)
                    if "reviewedBy" in record:
                        pipe.unwatch()
                        return record
                    at = server_ms(pipe, self.keys.versions)
                    record.update(reviewedBy=str(by), reviewedAt=at)
                    pipe.multi()
                    pipe.hset(self.keys.break_glass, mutation_id, json.dumps(record))
                    pipe.execute()
                    return record
                except WatchError as error:
                    if (cut := watch_broken(error)) is not None:
                        raise cut from error  # Redis went away, not a conflict


def _reviewable(raw: object, mutation_id: str, by: Actor) -> dict[str, Any]:
    """The listed record ``raw`` of ``mutation_id``, if ``by`` may mark it reviewed (or it
    is already)."""
    if raw is None:
        raise ReviewRefused(f"no break-glass change {mutation_id} is listed for review")
    record: dict[str, Any] = json.loads(str(raw))
    if "reviewedBy" in record:
        return record
    breaker = Actor.model_validate(record["by"])
    if not by.is_person:
        raise ReviewRefused(f"{by} cannot review a break-glass change; a person must")
    if breaker.identity == by.identity:
        raise ReviewRefused(f"{by} broke the glass on {record['key']}: someone else must review it")
    return record
