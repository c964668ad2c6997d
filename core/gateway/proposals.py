"""Agent proposals waiting for a person: stored in Redis so that a button rendered now can be
applied after a restart, and resolved once (applied or discarded).

Applying is claiming: the person who moves a proposal from pending to applied is the only one
who commits its mutation. If the commit is refused (their roles, a stale version), they hand
it back to pending, unless the mutation committed after all; a claim whose mutation never
committed is taken over after ``CLAIM_LEASE_MS`` (its applier stopped midway). Every move is
conditional, under WATCH of the proposal (and of the mutation's idempotency record)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from redis.exceptions import WatchError

from core.gateway.outcome import Proposal, ProposalStatus
from core.state.actor import Actor
from core.state.keys import WorkspaceKeys
from core.state.mutation import Mutation

if TYPE_CHECKING:
    from redis import Redis
    from redis.client import Pipeline

__all__ = ["CLAIM_LEASE_MS", "ProposalBox"]

RESOLVED_TTL_SEC = 7 * 86400
CLAIM_LEASE_MS = 30_000


class ProposalBox:
    def __init__(self, client: Redis, keys: WorkspaceKeys) -> None:
        self.redis = client
        self.keys = keys

    def add(self, mutation: Mutation) -> Proposal:
        """The proposal of ``mutation``: its id is the mutation's, so a retried delivery finds
        the proposal it made the first time (in whatever state it now is) and adds nothing."""
        proposal = Proposal(id=mutation.id, mutation=mutation)
        created = self.redis.set(
            self.keys.proposal(proposal.id), proposal.model_dump_json(by_alias=True), nx=True
        )
        if not created:
            return self.get(proposal.id) or proposal
        return proposal

    def get(self, proposal_id: str) -> Proposal | None:
        raw = self.redis.get(self.keys.proposal(proposal_id))
        return Proposal.model_validate_json(str(raw)) if raw else None

    def transition(
        self, proposal_id: str, expect: ProposalStatus, to: ProposalStatus, by: Actor | None
    ) -> Proposal | None:
        """Move a proposal from ``expect`` to ``to`` atomically, or None when it is no longer
        in ``expect`` (someone applied or discarded it first). A resolved proposal is kept a
        while so that a repeated click finds out what happened."""
        return self._move(proposal_id, lambda p: p.status is expect, to, by)

    def release(self, proposal_id: str, claimer: Actor, mutation_id: str) -> Proposal | None:
        """Hand back to pending a proposal ``claimer`` claimed and could not commit; None
        (and nothing changed) if someone else holds it now or ``mutation_id`` committed."""

        def held_by_claimer(p: Proposal) -> bool:
            return p.status is ProposalStatus.APPLIED and p.resolved_by == claimer

        return self._move(
            proposal_id, held_by_claimer, ProposalStatus.PENDING, None, unless=mutation_id
        )

    def take_over(self, proposal_id: str, by: Actor, mutation_id: str) -> Proposal | None:
        """Claim for ``by`` a proposal claimed more than ``CLAIM_LEASE_MS`` ago whose mutation
        ``mutation_id`` never committed; None if the claim is fresh or it committed."""
        stale = _now_ms() - CLAIM_LEASE_MS

        def abandoned(p: Proposal) -> bool:
            return p.status is ProposalStatus.APPLIED and (p.resolved_at or 0) < stale

        return self._move(proposal_id, abandoned, ProposalStatus.APPLIED, by, unless=mutation_id)

    def _move(
        self,
        proposal_id: str,
        may_move: Callable[[Proposal], bool],
        to: ProposalStatus,
        by: Actor | None,
        unless: str | None = None,
    ) -> Proposal | None:
        """The proposal moved to ``to`` if ``may_move`` holds (and mutation ``unless`` has
        not committed), atomically; else None and nothing written."""
        key = self.keys.proposal(proposal_id)
        committed = None if unless is None else self.keys.idempotency(unless)
        watched = [key] if committed is None else [key, committed]
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(*watched)  # type: ignore[no-untyped-call]
                    raw = pipe.get(key)
                    current = Proposal.model_validate_json(str(raw)) if raw else None
                    if current is None or not may_move(current):
                        return None
                    if committed is not None and pipe.exists(committed):
                        return None
                    at = None if to is ProposalStatus.PENDING else _now_ms()
                    moved = current.model_copy(
                        update={"status": to, "resolved_by": by, "resolved_at": at}
                    )
                    pipe.multi()
                    self._write(pipe, moved)
                    pipe.execute()
                    return moved
                except WatchError:
                    continue

    def _write(self, pipe: Pipeline, proposal: Proposal) -> None:
        data = proposal.model_dump_json(by_alias=True)
        if proposal.status is ProposalStatus.PENDING:
            pipe.set(self.keys.proposal(proposal.id), data)
        else:
            pipe.set(self.keys.proposal(proposal.id), data, ex=RESOLVED_TTL_SEC)


def _now_ms() -> int:
    return int(time.time() * 1000)
