"""Agent proposals waiting for a person: stored in Redis so that a button rendered now can be
applied after a restart, and resolved once (applied or discarded)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from redis.exceptions import WatchError

from core.gateway.outcome import Proposal, ProposalStatus
from core.state.actor import Actor
from core.state.keys import WorkspaceKeys
from core.state.mutation import Mutation

if TYPE_CHECKING:
    from redis import Redis
    from redis.client import Pipeline

__all__ = ["ProposalBox"]

RESOLVED_TTL_SEC = 7 * 86400


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
        key = self.keys.proposal(proposal_id)
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)  # type: ignore[no-untyped-call]
                    raw = pipe.get(key)
                    current = Proposal.model_validate_json(str(raw)) if raw else None
                    if current is None or current.status is not expect:
                        return None
                    moved = current.model_copy(update={"status": to, "resolved_by": by})
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
