"""Proposals waiting for people (an agent's, or a person's write whose key needs approval):
stored in Redis so that a button rendered now can be applied after a restart, and resolved
once (applied, discarded, expired or gone stale).

A proposal may need several distinct approvers (its ``quorum``): each approval is counted
once per person, atomically, and the last one claims it. An edit (a new value) sets the
others aside (they approved another value) and raises its ``revision``; it counts as its
editor's approval, except under four eyes, where the editor asked for the new value.
Every approval names the revision its approver saw and counts only at that one; four eyes
(not who asked for it, not who edited it last) is checked in the same move, on the proposal as
read there: what a click read before is never what decides.

Applying is claiming: the person who moves a proposal from pending to applied is the only one
who commits its mutation, and right after the commit writes what it committed into the
proposal (``Proposal.committed``), which is kept as long as the proposal is. From then on
nothing moves it: not a take-over, not a hand-back, whatever became of the mutation's
idempotency record (it may expire long before the proposal does).

If the commit is refused (their roles, a stale version), the claimer hands the proposal back
to pending, unless it committed after all. A claim whose mutation never committed is taken
over after ``CLAIM_LEASE_MS`` (its applier stopped midway) by an approval of the value
claimed, never by an edit (which approves another), but only while the mutation's
idempotency record would still show a commit made after the claim; past that window, or on a
proposal applied before claims were timed (no ``resolved_at``), whether it committed can no
longer be told, and it stays applied: a proposal commits at most once. Every move is
conditional, under WATCH of the proposal (and of the mutation's idempotency record); times
are the Redis server's, as the record's expiry is.

A pending proposal expires (fail-closed): it records its deadline (``expiresAt``) when it is
made, and the first move after that deadline, whatever was asked (a claim, a discard, a
hand-back, a take-over), makes it ``expired`` instead, so that it can no longer be applied.
Nothing is kept for ever: a pending proposal's key expires ``KEPT_MS`` after its deadline (it
can be shown as expired until then), a resolved one's ``KEPT_MS`` after it was resolved.
Each one made is counted, and how it ended (``core.metrics``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.gateway.approving import Barred, barred, counted, denied, resolved
from core.gateway.edits import Edit
from core.gateway.outcome import AppliedCommit, Approval, Proposal, ProposalStatus
from core.gateway.proposal_records import KEPT_MS, ProposalRecords, kept_until
from core.metrics import PROPOSALS, Meter
from core.state.actor import Actor
from core.state.commit_result import Committed
from core.state.keys import WorkspaceKeys
from core.state.scripts import server_ms

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["CLAIM_LEASE_MS", "KEPT_MS", "Approved", "ProposalBox"]

CLAIM_LEASE_MS = 30_000
LISTED = 100  # proposals read from the index at once, at most


@dataclass(frozen=True)
class Approved:
    """The proposal after an approval; ``counted``: False when its approver had approved it
    already (nothing changed)."""

    proposal: Proposal
    counted: bool


class ProposalBox:
    """``expire_after_ms``: how long a proposal may wait to be applied when it was made
    without a deadline of its own (the policy's ``proposals.expire_after_sec``; any value
    here, so that a test can make one that is due at once). ``settle``: what is kept of a
    proposal once written (``Secrecy.proposal``: a secret value is struck out of a resolved
    one)."""

    def __init__(
        self,
        client: RedisClient,
        keys: WorkspaceKeys,
        *,
        expire_after_ms: int,
        settle: Callable[[Proposal], Proposal],
    ) -> None:
        self.redis = client
        self.keys = keys
        self.expire_after_ms = expire_after_ms
        self.meter = Meter.of(client, keys.workspace)
        self.records = ProposalRecords(
            client, keys, expire_after_ms=expire_after_ms, settle=settle, meter=self.meter
        )

    def now(self) -> int:
        """The Redis server's clock (ms), which every deadline here is counted by."""
        return server_ms(self.redis, self.keys.versions)

    def add(self, proposal: Proposal, expire_after_ms: int | None = None) -> Proposal:
        """Keep ``proposal`` (its id is its mutation's), due ``expire_after_ms`` from now (the
        box's own when None): a retried delivery finds the proposal it made the first time
        (in whatever state it now is) and adds nothing."""
        now = server_ms(self.redis, self.keys.versions)
        wait = self.expire_after_ms if expire_after_ms is None else expire_after_ms
        deadline = now + wait
        proposal = proposal.model_copy(update={"created_at": now, "expires_at": deadline})
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(
                self.keys.proposal(proposal.id),
                proposal.model_dump_json(by_alias=True),
                nx=True,
                pxat=kept_until(deadline, now),
            )
            pipe.zadd(self.keys.proposals, {proposal.id: deadline}, nx=True)
            created, _ = pipe.execute()
        if not created:
            return self.get(proposal.id) or proposal
        self.meter.count(PROPOSALS, "created")
        return proposal

    def listed(self, *, resolved: bool = False, limit: int = 200) -> list[Proposal]:
        """The first ``limit`` pending proposals, soonest deadline first (with ``resolved``:
        then those applied, discarded, expired or gone stale, while they are kept, the last
        resolved first), read from the index a chunk at a time until as many were found:
        only those are read. An id whose proposal is gone is dropped from the index."""
        found = self._indexed("0", "+inf", limit, pending=True)
        if resolved and len(found) < limit:
            found += self.resolved(limit - len(found))
        return found

    def resolved(self, limit: int) -> list[Proposal]:
        """The last ``limit`` proposals resolved, while they are kept, the last first."""
        return self._indexed("-inf", "(0", limit, pending=False)

    def waiting(self) -> int:
        """How many proposals the index holds as pending (its count: none is read)."""
        return int(self.redis.zcount(self.keys.proposals, 0, "+inf"))

    def _indexed(self, low: str, high: str, limit: int, *, pending: bool) -> list[Proposal]:
        """The first ``limit`` proposals of the index's scores ``low`` to ``high`` (a pending
        one's is its deadline, a resolved one's minus when its key goes) that are ``pending``
        or not, in the index's order. (One moved between the two reads may be left out.)"""
        found: list[Proposal] = []
        start = 0
        while len(found) < limit:
            wanted = min(LISTED, limit - len(found))
            chunk = [
                str(i)
                for i in self.redis.zrangebyscore(self.keys.proposals, low, high, start, wanted)
            ]
            if not chunk:
                break
            start += len(chunk)
            raws = self.redis.mget([self.keys.proposal(i) for i in chunk])
            gone = [i for i, raw in zip(chunk, raws, strict=True) if raw is None]
            for raw in raws:
                try:
                    proposal = Proposal.model_validate_json(str(raw)) if raw is not None else None
                except ValueError:  # unreadable (planted past the limits): not listed
                    continue
                if proposal is not None and (proposal.status is ProposalStatus.PENDING) == pending:
                    found.append(proposal)
            if gone:
                self.redis.zrem(self.keys.proposals, *gone)
                start -= len(gone)  # (the range moved back by as many)
        return found[:limit]

    def due(self) -> list[str]:
        """Ids of pending proposals whose deadline has passed (``expire`` checks again). The
        index scores a pending proposal by its deadline and a resolved one by minus the time
        its key goes: those gone are dropped here."""
        now = server_ms(self.redis, self.keys.versions)
        self.redis.zremrangebyscore(self.keys.proposals, -now, -1)
        return [str(i) for i in self.redis.zrangebyscore(self.keys.proposals, 0, now)]

    def approve(
        self,
        proposal_id: str,
        by: Actor,
        edit: Edit | None = None,
        *,
        revision: int,
        reason: str | None = None,
    ) -> Approved | None:
        """Count ``by``'s approval of a pending proposal at ``revision`` (the value ``by``
        saw; with ``edit``: the new value, which only ``by`` has approved so far, or nobody
        under four eyes: the editor asked for it; ``reason``: why, kept with it), atomically:
        at its quorum, with its rule met, it is claimed for ``by`` (applied: ``by`` commits
        it). None when it is not pending; expired past its deadline; unchanged (``counted``
        False) when ``by`` approved it already, or it is no longer at ``revision`` (edited
        since). ``Barred`` (nothing changed) when four eyes bars ``by`` from it as it is where
        it is counted."""
        was_counted = True

        def count(p: Proposal, now: int) -> Proposal | None:
            nonlocal was_counted
            if p.status is not ProposalStatus.PENDING:
                return None
            if self.records.due(p, now):
                return self.records.expired(p, now)
            if revision != p.revision:
                was_counted = False
                return None
            moved = counted(p, by, edit, now, reason)
            was_counted = moved is not None
            return moved

        moved = self.records.move(proposal_id, count)
        if moved is None and not was_counted:
            current = self.get(proposal_id)
            return None if current is None else Approved(current, counted=False)
        return None if moved is None else Approved(moved, counted=True)

    def claim(self, proposal_id: str, by: Actor, reason: str, *, revision: int) -> Proposal | None:
        """Claim a pending proposal for ``by`` at once, whatever its approvals (breaking the
        glass, for ``reason``): None when it is not pending, or not at ``revision`` (edited
        since ``by`` saw it); expired past its deadline."""

        def take(p: Proposal, now: int) -> Proposal | None:
            if p.status is not ProposalStatus.PENDING or revision != p.revision:
                return None
            if self.records.due(p, now):
                return self.records.expired(p, now)
            claimed = resolved(p, ProposalStatus.APPLIED, by, now)
            return claimed.model_copy(update={"break_glass": reason})

        return self.records.move(proposal_id, take)

    def expire(self, proposal_id: str) -> Proposal | None:
        """Expire a pending proposal past its deadline (the worker's sweep): None when it is
        not pending or not due yet."""

        def lapse(p: Proposal, now: int) -> Proposal | None:
            if p.status is not ProposalStatus.PENDING or not self.records.due(p, now):
                return None
            return self.records.expired(p, now)

        return self.records.move(proposal_id, lapse)

    def stale(self, proposal_id: str, claimer: Actor) -> Proposal | None:
        """``claimer`` could not commit because the key moved past the version the proposal
        was made against: it never will be applied (None: it committed after all)."""

        def give_up(p: Proposal, now: int) -> Proposal | None:
            if p.committed is not None or p.status is not ProposalStatus.APPLIED:
                return None
            if p.resolved_by != claimer:
                return None
            return resolved(p, ProposalStatus.STALE, claimer, now)

        return self.records.move(proposal_id, give_up)

    def discard(self, proposal_id: str, by: Actor, reason: str | None) -> Proposal | None:
        """Discard a pending proposal, keeping ``reason`` (under ``deny_at``: count ``by``'s
        denial, which discards it at the last); None when it is not pending (an expired one
        is returned so)."""

        def drop(p: Proposal, now: int) -> Proposal | None:
            if p.status is not ProposalStatus.PENDING:
                return None
            if self.records.due(p, now):
                return self.records.expired(p, now)
            return denied(p, by, reason, now)

        return self.records.move(proposal_id, drop)

    def deadline(self, proposal: Proposal) -> int:
        """Until when ``proposal`` may be applied (server time)."""
        return self.records.deadline(proposal)

    def sweep(self) -> int:
        """Give their expiry to proposals stored before proposals had one (a release that
        kept them for ever), as ``ProposalRecords.write`` would have, and the pending ones
        their place in the index; how many. A SCAN of the keyspace: the worker runs it once
        a day."""
        now, swept = server_ms(self.redis, self.keys.versions), 0
        pattern = self.keys.every_key.removesuffix("*") + ":proposal:*"
        for name in self.redis.scan_iter(match=pattern, count=500):
            if int(self.redis.pttl(name)) != -1:
                continue
            raw = self.redis.get(name)
            try:
                proposal = Proposal.model_validate_json(str(raw))
            except ValueError:  # unreadable: kept the week a resolved one is
                until = now + KEPT_MS
            else:
                until = now + KEPT_MS
                if proposal.status is ProposalStatus.PENDING:  # and into the index
                    deadline = self.deadline(proposal)
                    until = kept_until(deadline, now)
                    self.redis.zadd(self.keys.proposals, {proposal.id: deadline}, nx=True)
            swept += int(self.redis.pexpireat(name, until))
        return swept

    def get(self, proposal_id: str) -> Proposal | None:
        return self.records.get(proposal_id)

    def record_commit(self, proposal_id: str, done: Committed) -> Proposal | None:
        """Write into the proposal what its mutation committed (``done``), and that it is
        applied: called right after the commit, by whoever committed it or found it on
        record. The commit is what happened, so it counts whatever the proposal became
        meanwhile (its applier stalled past the lease, was taken over, and whoever took over
        was refused and handed it back, or then discarded it). None (nothing written) if a
        commit is in it already."""

        def record(p: Proposal, now: int) -> Proposal | None:
            if p.committed is not None:
                return None
            applied = resolved(p, ProposalStatus.APPLIED, done.request.actor, now)
            return applied.model_copy(update={"committed": AppliedCommit.of(done)})

        return self.records.move(proposal_id, record)

    def release(self, proposal_id: str, claimer: Actor, mutation_id: str) -> Proposal | None:
        """Hand back to pending a proposal ``claimer`` claimed and could not commit (expired,
        past its deadline); None (and nothing changed) if a commit is recorded in it,
        someone else holds it now or ``mutation_id`` committed."""

        def hand_back(p: Proposal, now: int) -> Proposal | None:
            if p.committed is not None or p.status is not ProposalStatus.APPLIED:
                return None
            if p.resolved_by != claimer:
                return None
            if self.records.due(p, now):
                return self.records.expired(p, now)
            # the claimer's approval goes with the claim (they may try again), and so does
            # the glass they broke: it waits as it was
            kept = [a for a in p.approvals if a.by.identity != claimer.identity]
            return resolved(p, ProposalStatus.PENDING, None, now).model_copy(
                update={"approvals": kept, "break_glass": None}
            )

        return self.records.move(proposal_id, hand_back, unless=mutation_id)

    def take_over(
        self, proposal_id: str, by: Actor, mutation_id: str, window_ms: int, *, revision: int
    ) -> Proposal | None:
        """Claim for ``by`` a proposal claimed more than ``CLAIM_LEASE_MS`` ago whose mutation
        ``mutation_id`` never committed, as its idempotency record (kept ``window_ms``) tells
        while the claim is younger than that; None if a commit is recorded in it, the claim is
        fresh, too old to tell or untimed, the mutation committed, or the proposal is not at
        ``revision`` (the value ``by`` saw). Past the proposal's deadline, an abandoned claim
        is not taken over: the proposal expires (returned so). An abandoned claim made by
        breaking the glass is handed back (pending, returned so), never taken over: its
        approvals were never met, and it waits for them again. Whoever takes over commits
        it as theirs, and is counted among its approvers: under four eyes, never who asked
        for it or edited it (``Barred``, nothing changed; its claimer, or another approver,
        finishes it)."""

        def claim(p: Proposal, now: int) -> Proposal | None:
            if not abandoned(p, now):
                return None
            if self.records.due(p, now):
                return self.records.expired(p, now)
            if p.break_glass is not None:
                back = resolved(p, ProposalStatus.PENDING, None, now)
                return back.model_copy(update={"break_glass": None})
            if revision != p.revision:
                return None
            if (why := barred(p, by)) is not None:
                raise Barred(why, p)
            approvals = (
                p.approvals if p.approved_by(by) else [*p.approvals, Approval(by=by, at=now)]
            )
            claimed = resolved(p, ProposalStatus.APPLIED, by, now)
            return claimed.model_copy(update={"approvals": approvals})

        def abandoned(p: Proposal, now: int) -> bool:
            if p.committed is not None or p.status is not ProposalStatus.APPLIED:
                return False
            if p.resolved_at is None:  # applied before claims were timed: applied, then
                return False
            return CLAIM_LEASE_MS < now - p.resolved_at < window_ms

        return self.records.move(proposal_id, claim, unless=mutation_id)

    def claim_is_fresh(self, proposal: Proposal) -> bool:
        """Whether ``proposal`` was claimed within ``CLAIM_LEASE_MS``, its claimer likely still
        at work (server time)."""
        if proposal.status is not ProposalStatus.APPLIED or proposal.resolved_at is None:
            return False
        now = server_ms(self.redis, self.keys.versions)
        return now - proposal.resolved_at <= CLAIM_LEASE_MS
