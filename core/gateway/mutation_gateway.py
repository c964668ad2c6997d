"""The MutationGateway: the only way to change canonical state.

Button clicks, slash commands, the model's tools, rules and connectors all call ``propose``.
Policy decides first; then the store commits atomically, or the change waits as an agent
proposal for a person (until it expires), or it is rejected with the reason (and the latest
entry on conflict).
"""

from __future__ import annotations

import contextlib
from dataclasses import replace

from core.errors import DeliberateError
from core.gateway.decisions import DecisionLog
from core.gateway.outcome import Outcome, Pending, Proposal, ProposalStatus, expired_message
from core.gateway.policy import GuestPolicy, Policy, VerdictKind
from core.gateway.proposals import ProposalBox
from core.redis_client import INTERRUPTED
from core.state.actor import Actor, ActorKind
from core.state.commit_result import Committed, Rejected, RejectReason
from core.state.limits import Unacknowledged
from core.state.mutation import Mutation
from core.state.store import StateStore

__all__ = ["MutationGateway", "UnknownProposal"]


class UnknownProposal(DeliberateError):
    def __init__(self, proposal_id: str) -> None:
        super().__init__(f"no proposal {proposal_id} (it may have expired)")
        self.proposal_id = proposal_id


class MutationGateway:
    """``proposal_expiry_ms``: how long a proposal may wait to be applied, when not the
    policy's ``proposals.expire_after_sec`` (a test's proposals may be due at once)."""

    def __init__(
        self, store: StateStore, policy: Policy, *, proposal_expiry_ms: int | None = None
    ) -> None:
        self.store = store
        self.policy = policy
        if proposal_expiry_ms is None:
            proposal_expiry_ms = policy.config.proposals.expire_after_sec * 1000
        self.proposals = ProposalBox(store.redis, store.keys, expire_after_ms=proposal_expiry_ms)
        self.decisions = DecisionLog(store.redis, store.keys)

    def propose(self, mutation: Mutation) -> Outcome:
        verdict = self.policy.check(mutation)
        outcome: Outcome
        if verdict.kind is VerdictKind.REJECT:
            assert verdict.reason is not None
            outcome = Rejected(verdict.mutation, verdict.reason, verdict.message)
        elif verdict.kind is VerdictKind.PROPOSE:
            proposal = self.proposals.add(verdict.mutation)  # (the first, on a retried id)
            if proposal.status is ProposalStatus.EXPIRED:
                return self._expired(proposal, verdict.mutation)
            outcome = Pending(verdict.mutation, proposal)
        else:
            outcome = self._hide_secret(self.store.commit(verdict.mutation, verdict.limits))
        self.decisions.record(outcome)
        return outcome

    def _hide_secret(self, outcome: Committed | Rejected) -> Committed | Rejected:
        """An agent never gets a secret value back, not even as the latest entry of a conflict."""
        if not isinstance(outcome, Rejected) or outcome.latest is None:
            return outcome  # (a Committed's mutation is built lazily: don't touch it)
        m = outcome.mutation
        if m.actor.kind is ActorKind.AGENT and self.policy.is_secret(m.key):
            return replace(outcome, latest=None)
        return outcome

    def apply_proposal(
        self,
        proposal_id: str,
        actor: Actor,
        *,
        expected_version: int | None = None,
    ) -> Outcome:
        """A person applies an agent's proposal: the person is the actor (their roles are
        checked), the agent is ``proposedBy``. A proposal commits at most once: whoever claims
        it commits, and writes the result into it; a later click is answered from there (its
        mutation id, derived from the proposal, would also find the first result while the
        idempotency record lasts). Past its deadline it is refused as expired, and nothing
        is written but that."""
        proposal = self._proposal(proposal_id)
        mutation = _applying(proposal, actor, "apply", expected_version)
        refusal = _refuse_apply(proposal, mutation, actor, self.policy.config.guests)
        if refusal is not None:
            self.decisions.record(refusal)
            return refusal
        if proposal.status is ProposalStatus.EXPIRED:
            return self._expired(proposal, mutation)
        claimed = self.proposals.transition(
            proposal.id, ProposalStatus.PENDING, ProposalStatus.APPLIED, actor
        )
        if claimed is not None and claimed.status is ProposalStatus.EXPIRED:
            return self._expired(claimed, mutation)
        if claimed is None:  # only the one who claims it commits
            current = self._proposal(proposal.id)
            if current.status is not ProposalStatus.APPLIED:
                # discarded meanwhile (refused next time round) or handed back: again
                return self.apply_proposal(proposal.id, actor, expected_version=expected_version)
            first = self._first_result(current, mutation)
            if first is not None:
                return self._again(mutation, first)
            window = self.store.idempotency_ttl_ms
            taken = self.proposals.take_over(proposal.id, actor, mutation.id, window)
            if taken is None:
                return self._not_taken_over(proposal.id, actor, mutation, expected_version)
            if taken.status is ProposalStatus.EXPIRED:
                return self._expired(taken, mutation)
        try:
            outcome = self.propose(mutation)
        except Unacknowledged:
            # applied once or not at all: handed back at once, so that the next click sends
            # the same mutation id again (which finds the first result if it landed) rather
            # than wait for the claim to lapse; with Redis still away, it lapses by itself
            with contextlib.suppress(*INTERRUPTED):
                self.proposals.release(proposal.id, actor, mutation.id)
            raise
        if isinstance(outcome, Committed):
            self.proposals.record_commit(proposal.id, outcome)
        else:
            # not applied after all (not allowed, stale): it waits again for someone who can
            self.proposals.release(proposal.id, actor, mutation.id)
        return outcome

    def _expired(self, proposal: Proposal, mutation: Mutation) -> Rejected:
        """A click on a proposal past its deadline: refused, and recorded with the deadline."""
        deadline = self.proposals.deadline(proposal)
        expired = Rejected(mutation, RejectReason.EXPIRED, expired_message(deadline))
        self.decisions.record(expired, proposal_id=proposal.id, expired_at=deadline)
        return expired

    def _first_result(self, proposal: Proposal, mutation: Mutation) -> Committed | None:
        """What applying ``proposal`` committed: as recorded in it, or else as the mutation's
        idempotency record has it (its applier stopped before recording it: recorded now)."""
        if proposal.committed is not None:
            return proposal.committed.again()
        found = self.store.committed(mutation.id, request=mutation)
        if found is not None:
            self.proposals.record_commit(proposal.id, found)
        return found

    def _again(self, mutation: Mutation, first: Committed) -> Committed | Rejected:
        """A click on an applied proposal: the first result, to whoever may write the key
        (as the store would answer a repeated mutation id after the policy let it through);
        nothing is written."""
        verdict = self.policy.check(mutation)
        outcome: Committed | Rejected = first
        if verdict.kind is VerdictKind.REJECT:
            assert verdict.reason is not None
            outcome = Rejected(verdict.mutation, verdict.reason, verdict.message)
        self.decisions.record(outcome)
        return outcome

    def _not_taken_over(
        self, proposal_id: str, actor: Actor, mutation: Mutation, expected_version: int | None
    ) -> Outcome:
        current = self._proposal(proposal_id)
        if current.status is not ProposalStatus.APPLIED:  # handed back meanwhile: again
            return self.apply_proposal(proposal_id, actor, expected_version=expected_version)
        first = self._first_result(current, mutation)
        if first is not None:  # its applier committed meanwhile
            return self._again(mutation, first)
        if self.proposals.claim_is_fresh(current):
            return self._busy(mutation, current.resolved_by)
        # claimed too long ago (or before claims were timed) for its record to tell whether
        # it committed: at most once, so not again
        by = current.resolved_by
        gone = Rejected(
            mutation,
            RejectReason.NOT_FOUND,
            f"this proposal was already applied{f' by {by}' if by else ''}; "
            "its result is no longer on record",
        )
        self.decisions.record(gone)
        return gone

    def _busy(self, mutation: Mutation, applier: Actor | None) -> Rejected:
        busy = Rejected(
            mutation,
            RejectReason.CONFLICT,
            f"{applier or 'someone'} is applying this proposal right now; try again in a moment",
        )
        self.decisions.record(busy)
        return busy

    def discard_proposal(self, proposal_id: str, actor: Actor) -> Proposal:
        """The proposal after the discard; if someone applied it first, it as they left it;
        past its deadline, expired (which the click's decision record says)."""
        self._proposal(proposal_id)  # an unknown proposal is a clear error
        if not actor.is_person:
            raise DeliberateError(f"{actor} cannot discard a proposal; a person must")
        if actor.kind is ActorKind.GUEST and not self.policy.config.guests.apply:
            raise DeliberateError(f"{actor} is a guest here: guests may not discard proposals")
        moved = self.proposals.transition(
            proposal_id, ProposalStatus.PENDING, ProposalStatus.DISCARDED, actor
        )
        proposal = moved if moved is not None else self._proposal(proposal_id)
        if proposal.status is ProposalStatus.EXPIRED:
            self._expired(proposal, _applying(proposal, actor, "discard"))
        return proposal

    def _proposal(self, proposal_id: str) -> Proposal:
        proposal = self.proposals.get(proposal_id)
        if proposal is None:
            raise UnknownProposal(proposal_id)
        return proposal


def _applying(
    proposal: Proposal, actor: Actor, verb: str, expected_version: int | None = None
) -> Mutation:
    """The proposed mutation as ``actor`` would commit it by clicking ``verb``."""
    proposed = proposal.mutation
    return proposed.with_changes(
        id=f"{verb}-{proposal.id}",
        actor=actor,
        proposed_by=proposed.actor,
        causation_id=proposed.id,
        expected_version=(
            proposed.expected_version if expected_version is None else expected_version
        ),
    )


def _refuse_apply(
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
    return None
