"""The MutationGateway: the only way to change canonical state.

Button clicks, slash commands, the model's tools, rules and connectors all call ``propose``.
Policy decides first; then the store commits atomically, or the change waits as an agent
proposal for a person (until it expires), or it is rejected with the reason (and the latest
entry on conflict).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Concatenate, ParamSpec

from core.errors import DeliberateError
from core.gateway.approving import (
    Barred,
    applying,
    edited_since,
    glass_claim,
    moved_on,
    no_revision,
    proposal_of,
    refuse_apply,
)
from core.gateway.decisions import DecisionLog
from core.gateway.edits import Edit
from core.gateway.outcome import (
    DiscardRefused,
    Outcome,
    Pending,
    Proposal,
    ProposalStatus,
    UnknownProposal,
    expired_message,
    stale_message,
)
from core.gateway.policy import Policy, Verdict, VerdictKind
from core.gateway.proposals import Approved, ProposalBox
from core.gateway.secrecy import Secrecy
from core.metrics import Meter
from core.redis.client import INTERRUPTED
from core.state.actor import Actor, ActorKind
from core.state.commit_result import Committed, Rejected, RejectReason
from core.state.limits import Unacknowledged
from core.state.mutation import Mutation
from core.state.scripts import ScriptCall
from core.state.store import StateStore

__all__ = ["MAX_REASON", "DiscardRefused", "MutationGateway", "UnknownProposal"]

MAX_REASON = 300  # characters of a discard's reason that are kept


P = ParamSpec("P")


def _told_without_secrets(
    method: Callable[Concatenate[MutationGateway, P], Outcome],
) -> Callable[Concatenate[MutationGateway, P], Outcome]:
    """``method``'s answer with no secret value in it (a refusal may quote one)."""

    @functools.wraps(method)
    def told(gateway: MutationGateway, /, *args: P.args, **kwargs: P.kwargs) -> Outcome:
        return gateway.secrecy.outcome(method(gateway, *args, **kwargs))

    return told


class MutationGateway:
    """``proposal_expiry_ms``: how long a proposal may wait to be applied, when not its key's
    policy's (a test's proposals may be due at once). ``meter``: the workspace's counts
    (its decision log and proposals count into it; so do model calls made for it)."""

    def __init__(
        self, store: StateStore, policy: Policy, *, proposal_expiry_ms: int | None = None
    ) -> None:
        self.store = store
        self.policy = policy
        self._expiry_ms = proposal_expiry_ms
        if proposal_expiry_ms is None:
            proposal_expiry_ms = policy.config.proposals.expire_after_sec * 1000
        self.meter = Meter.of(store.redis, store.workspace)
        self.secrecy = Secrecy(policy.is_secret)
        self.proposals = ProposalBox(
            store.redis,
            store.keys,
            expire_after_ms=proposal_expiry_ms,
            settle=self.secrecy.proposal,
        )
        self.decisions = DecisionLog(store.redis, store.keys, self.secrecy)

    def propose(self, mutation: Mutation) -> Outcome:
        mutation = self.secrecy.reasoned(mutation, self.store.get)  # (no secret in its reason)
        verdict = self.policy.check(mutation)
        m = verdict.mutation
        outcome: Outcome
        if verdict.kind is VerdictKind.REJECT:
            assert verdict.reason is not None
            outcome = Rejected(verdict.mutation, verdict.reason, verdict.message)
        elif verdict.kind is VerdictKind.PROPOSE:
            base = self.store.version(m.key) if m.expected_version is None else m.expected_version
            made = proposal_of(m, self.policy.approval(m.key), base)
            proposal = self.proposals.add(made, self._wait(m))  # (the first, on a retried id)
            if proposal.status is ProposalStatus.EXPIRED:
                return self.expired(proposal, verdict.mutation)
            if proposal.status in (ProposalStatus.DISCARDED, ProposalStatus.STALE):
                outcome = Rejected(
                    verdict.mutation,
                    RejectReason.NOT_FOUND,
                    f"this change was proposed before and {proposal.status.value}; "
                    "nothing was changed",
                )
                self.decisions.record(outcome, proposal_id=proposal.id)
                return outcome
            outcome = Pending(verdict.mutation, proposal)
        else:
            outcome = self._hide_secret(self.store.commit(verdict.mutation, verdict.limits))
        return self._decided(outcome)

    def ready(self, mutation: Mutation) -> Verdict | None:
        """The policy's verdict on ``mutation`` when it commits at once and no replica must
        confirm it: then it may be committed on a session's save, in the same round trip
        (``commit_on``, its reply read by ``answered``). None: ``propose`` it."""
        if self.store.durability.replicas:
            return None
        verdict = self.policy.check(self.secrecy.reasoned(mutation, self.store.get))
        return verdict if verdict.kind is VerdictKind.COMMIT else None

    def answered(
        self,
        verdict: Verdict,
        reply: list[Any],
        told: Callable[[Outcome], Outcome] | None = None,
        **details: Any,
    ) -> Outcome | None:
        """What the commit of ``commit_on`` came to, as ``propose`` tells it (None: its save
        did not land, and nothing was written: ``propose`` it, or update again); ``told``:
        as the caller tells it (a revert's, ``Planned.told``), logged so, with ``details``
        (a revert's ``reverts``)."""
        outcome = self.store.answered(verdict.mutation, reply)
        if outcome is None:
            return None
        outcome = self._hide_secret(outcome)
        return self._decided(outcome if told is None else told(outcome), **details)

    def commit_on(
        self, verdict: Verdict, session_key: str, token: str, deadline: int | None = None
    ) -> ScriptCall:
        """The commit of a ``ready`` verdict, made only on the save of ``session_key`` whose
        token is ``token`` (``StateStore.commit_on``: it says what the key held, but for a
        secret key), refused as expired at or past ``deadline`` (server ms)."""
        m, limits = verdict.mutation, verdict.limits
        say = not self.policy.is_secret(m.key)
        return self.store.commit_on(m, limits, session_key, token, deadline, say_prev=say)

    def _decided(self, outcome: Outcome, **details: Any) -> Outcome:
        outcome = self.secrecy.outcome(outcome)
        self.decisions.record(outcome, **details)
        return outcome

    def _wait(self, mutation: Mutation) -> int:
        """How long a proposal for ``mutation``'s key may wait: the key's policy's (or the
        gateway's own, when it was given one)."""
        if self._expiry_ms is not None:
            return self._expiry_ms
        return self.policy.expire_after_ms(mutation.key)

    def _hide_secret(self, outcome: Committed | Rejected) -> Committed | Rejected:
        """An agent never gets a secret value back, not even as the latest entry of a conflict."""
        if not isinstance(outcome, Rejected) or outcome.latest is None:
            return outcome  # (a Committed's mutation is built lazily: don't touch it)
        m = outcome.mutation
        if m.actor.kind is ActorKind.AGENT and self.policy.is_secret(m.key):
            return replace(outcome, latest=None)
        return outcome

    @_told_without_secrets
    def apply_proposal(
        self,
        proposal_id: str,
        actor: Actor,
        *,
        expected_version: int | None = None,
        edit: Edit | None = None,
        revision: int | None,
        reason: str | None = None,
    ) -> Outcome:
        """A person approves a proposal (``edit``: a value of their own instead; ``reason``:
        why, kept with their approval, no secret in it): the person is the actor (their
        roles are checked, and the value against the key's schema), whoever asked for it is
        ``proposedBy``. It commits at its quorum's last distinct approver, who claims it: a
        proposal commits at most once, and a later click is answered from what it committed.
        Until then it is ``Pending``, with the approvals so far. Past its deadline it is
        refused as expired; with the key moved past the version it was made against, as
        stale; under four eyes, to who asked for it or edited it, as it is where the approval
        is counted. ``revision``: the edit of it the approver saw (a button names it):
        refused once edited since, and when None."""
        proposal = self._proposal(proposal_id)
        try:
            mutation = applying(proposal, actor, expected_version, edit)
        except ValueError as exc:  # an edited value the operation cannot take
            said = f"the new value: {exc}"
            if edit is not None and self.secrecy.is_secret(proposal.mutation.key):
                said = self.secrecy.redactor(values=[edit.value]).text(said)
            refused = Rejected(proposal.mutation, RejectReason.SCHEMA, said)
            self.decisions.record(refused, proposal_id=proposal.id)
            return refused
        if revision is None:
            refused = no_revision(mutation)
            self.decisions.record(refused, proposal_id=proposal.id)
            return refused
        refusal = refuse_apply(proposal, mutation, actor, self.policy.config.guests)
        if refusal is None and proposal.status is ProposalStatus.EXPIRED:
            return self.expired(proposal, mutation)
        if refusal is None and proposal.status is ProposalStatus.PENDING:
            verdict = self.policy.check(mutation)  # each approver's roles; an edit's schema
            if verdict.kind is VerdictKind.REJECT:
                assert verdict.reason is not None
                refusal = Rejected(verdict.mutation, verdict.reason, verdict.message)
        # (after the roles: only who may apply it is told what it reads now)
        if refusal is None and proposal.status is ProposalStatus.PENDING:
            refusal = edited_since(proposal, mutation, revision, self.secrecy)
        if refusal is not None:
            self.decisions.record(refusal, proposal_id=proposal.id)
            return refusal
        # (its value, as proposed and as edited, and the one its key holds now)
        hide = self.secrecy.redactor(
            mutation,
            values=[proposal.current_value, self.secrecy.held(mutation.key, self.store.get)],
        )
        asked = (edit, revision, expected_version, hide.kept(reason, MAX_REASON) or None)
        try:
            return self._approve(proposal, actor, mutation, *asked)
        except Barred as exc:  # four eyes, as the proposal was where it was to be counted
            barred = Rejected(mutation, RejectReason.FORBIDDEN, str(exc))
            self.decisions.record(barred, proposal_id=proposal.id)
            return barred

    def _approve(
        self,
        proposal: Proposal,
        actor: Actor,
        mutation: Mutation,
        edit: Edit | None,
        revision: int,
        expected_version: int | None,
        reason: str | None,
    ) -> Outcome:
        """``apply_proposal`` past what a copy of the proposal refuses: the approval counted
        (``Barred`` raised where four eyes bars it), and committed by whoever claims it."""

        def again() -> Outcome:  # the same click once more (the proposal moved meanwhile)
            return self.apply_proposal(
                proposal.id,
                actor,
                expected_version=expected_version,
                edit=edit,
                revision=revision,
                reason=reason,
            )

        approved = self.proposals.approve(
            proposal.id, actor, edit, revision=revision, reason=reason
        )
        if approved is not None and not approved.counted:
            edited = edited_since(approved.proposal, mutation, revision, self.secrecy)
            if edited is not None:  # edited between the check and the count
                self.decisions.record(edited, proposal_id=proposal.id)
                return edited
        if approved is not None and approved.proposal.status is ProposalStatus.PENDING:
            return self._waiting(mutation, approved)
        if approved is not None and approved.proposal.status is ProposalStatus.EXPIRED:
            return self.expired(approved.proposal, mutation)
        if approved is not None and approved.counted:  # claimed: this approver commits
            mutation = applying(approved.proposal, actor, expected_version)
        else:  # only the one who claims it commits
            current = self._proposal(proposal.id)
            if current.status is not ProposalStatus.APPLIED:
                # discarded meanwhile (refused next time round) or handed back: again
                return again()
            first = self._first_result(current, mutation)
            if first is not None:
                return self._again(mutation, first)
            if edit is not None:  # a take-over commits the value claimed, never this edit
                return self._busy(mutation, current.resolved_by, edit=True)
            window, claimer = self.store.idempotency_ttl_ms, glass_claim(current) or mutation
            taken = self.proposals.take_over(
                proposal.id, actor, claimer.id, window, revision=revision
            )
            if taken is None:
                return self._not_taken_over(proposal.id, mutation, again)
            if taken.status is ProposalStatus.EXPIRED:
                return self.expired(taken, mutation)
            if taken.status is ProposalStatus.PENDING:  # a break-glass claim, handed back
                return again()
            mutation = applying(taken, actor, expected_version)
        return self.commit_claimed(proposal.id, actor, mutation)

    def commit_claimed(self, proposal_id: str, actor: Actor, mutation: Mutation) -> Outcome:
        try:
            outcome = self.propose(mutation)
        except Unacknowledged:
            # applied once or not at all: handed back at once, so that the next click sends
            # the same mutation id again (which finds the first result if it landed) rather
            # than wait for the claim to lapse; with Redis still away, it lapses by itself
            with contextlib.suppress(*INTERRUPTED):
                self.proposals.release(proposal_id, actor, mutation.id)
            raise
        if isinstance(outcome, Committed):
            self.proposals.record_commit(proposal_id, outcome)
        elif isinstance(outcome, Rejected) and moved_on(outcome, mutation):
            # made against a version the key has left: it never will apply
            if self.proposals.stale(proposal_id, actor) is not None:
                # (with the latest entry: people are shown what is there instead)
                stale = stale_message(mutation, outcome.version)
                outcome = replace(outcome, reason=RejectReason.STALE, message=stale)
                # (counted once: as the conflict, when its commit was refused)
                self.decisions.record(outcome, metered=False, proposal_id=proposal_id)
        else:
            # not applied after all (not allowed, rate-limited): it waits again
            self.proposals.release(proposal_id, actor, mutation.id)
        return outcome

    def _waiting(self, mutation: Mutation, approved: Approved) -> Pending:
        """An approval that was not the last one the proposal needs."""
        proposal = approved.proposal
        waiting = Pending(mutation, proposal)
        self.decisions.record(
            waiting,
            proposal_id=proposal.id,
            approvals=[str(a.by) for a in proposal.approvals],
            quorum=proposal.quorum,
            counted=approved.counted,
        )
        return waiting

    def expired(self, proposal: Proposal, mutation: Mutation, *, clicked: bool = True) -> Rejected:
        """A proposal past its deadline (a click on it, refused, or the sweep): recorded with
        the deadline, and said with how long ago it passed."""
        deadline = self.proposals.deadline(proposal)
        said = expired_message(deadline, self.proposals.now())
        expired = Rejected(mutation, RejectReason.EXPIRED, said, deadline=deadline)
        self.decisions.record(
            expired,
            metered=clicked,  # the sweep refused nobody (the proposal's expiry is counted)
            proposal_id=proposal.id,
            expired_at=deadline,
            clicked=clicked,
        )
        return expired

    def _first_result(self, proposal: Proposal, mutation: Mutation) -> Committed | None:
        """What applying ``proposal`` committed: as recorded in it, or else as the mutation's
        idempotency record has it (its applier stopped before recording it: recorded now)."""
        if proposal.committed is not None:
            return proposal.committed.again()
        mutation = glass_claim(proposal) or mutation  # (a break-glass claim commits its own)
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
        self, proposal_id: str, mutation: Mutation, again: Callable[[], Outcome]
    ) -> Outcome:
        current = self._proposal(proposal_id)
        if current.status is not ProposalStatus.APPLIED:  # handed back meanwhile: again
            return again()
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

    def _busy(self, mutation: Mutation, applier: Actor | None, edit: bool = False) -> Rejected:
        then = "as it was: an edit cannot take it over; nothing was changed"
        said = f"{applier or 'someone'} is applying this proposal "
        said += then if edit else "right now; try again in a moment"
        busy = Rejected(mutation, RejectReason.CONFLICT, said)
        self.decisions.record(busy)
        return busy

    def discard_proposal(
        self, proposal_id: str, actor: Actor, reason: str | None = None
    ) -> Proposal:
        """The proposal after the discard, which keeps ``reason`` (the discarder's words, for
        the log and the model's next call); if someone applied it first, it as they left it;
        past its deadline, expired (which the click's decision record says). It takes the
        right to apply it (``Policy.refuse_deciding``), else ``DiscardRefused`` (recorded;
        nothing changes). Four eyes does not bar whoever asked for it (or edited it) from
        withdrawing it, given that right: it guards changes, and a discard changes nothing."""
        proposal = self._proposal(proposal_id)  # an unknown proposal is a clear error
        if not actor.is_person:
            raise DeliberateError(f"{actor} cannot discard a proposal; a person must")
        refused = self.policy.refuse_deciding(actor, proposal.mutation.key, "discard")
        if refused is not None:  # (said with no value: a secret key's stays unsaid)
            why, message = refused
            refusal = Rejected(
                applying(proposal, actor, verb="discard"), why, f"{message}; nothing was changed"
            )
            self.decisions.record(refusal, proposal_id=proposal.id)
            raise DiscardRefused(refusal)
        # (a secret value quoted in it: struck out before it is cut; nothing that shows: none)
        discarding = applying(proposal, actor)
        hide = self.secrecy.redactor(
            discarding, values=[self.secrecy.held(discarding.key, self.store.get)]
        )
        reason = hide.kept(reason, MAX_REASON) or None
        moved = self.proposals.discard(proposal_id, actor, reason)
        proposal = moved if moved is not None else self._proposal(proposal_id)
        if proposal.status is ProposalStatus.EXPIRED:
            self.expired(proposal, applying(proposal, actor, verb="discard"))
        elif moved is not None:  # discarded, or a denial counted towards ``deny_at``
            self.decisions.discarded(proposal, actor)
        return proposal

    def expire_due(self) -> int:
        """Expire the pending proposals past their deadline, each recorded with it (the
        worker runs this every minute; a click on one is refused as expired anyway); how
        many."""
        expired = 0
        for proposal_id in self.proposals.due():
            proposal = self.proposals.expire(proposal_id)
            if proposal is not None:
                self.expired(proposal, proposal.mutation, clicked=False)
                expired += 1
        return expired

    def _proposal(self, proposal_id: str) -> Proposal:
        proposal = self.proposals.get(proposal_id)
        if proposal is None:
            raise UnknownProposal(proposal_id)
        return proposal
