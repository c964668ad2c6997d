"""Where proposals are kept (``core.gateway.proposals`` says what they are): each one's key,
written whole with the expiry it must keep, and its place in the index the sweep reads; every
move conditional, under WATCH of the proposal (and of a mutation's idempotency record), at
the Redis server's time."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from redis.exceptions import WatchError

from core.gateway.approving import resolved
from core.gateway.outcome import Proposal, ProposalStatus, ending
from core.metrics import PROPOSALS, Meter
from core.redis.client import watch_broken
from core.state.keys import WorkspaceKeys
from core.state.scripts import server_ms

if TYPE_CHECKING:
    from core.redis.client import RedisClient, RedisPipeline

__all__ = ["KEPT_MS", "Change", "ProposalRecords", "kept_until"]

KEPT_MS = 7 * 86_400_000  # how long a proposal is kept past its deadline or its resolution

# what a move makes of the proposal, given it and the server time; None: it may not move
Change = Callable[[Proposal, int], Proposal | None]


class ProposalRecords:
    """The stored proposals of one workspace. ``expire_after_ms``: the deadline of one made
    before proposals recorded theirs; ``settle``: what is kept of a proposal once written."""

    def __init__(
        self,
        client: RedisClient,
        keys: WorkspaceKeys,
        *,
        expire_after_ms: int,
        settle: Callable[[Proposal], Proposal],
        meter: Meter,
    ) -> None:
        self.redis = client
        self.keys = keys
        self.expire_after_ms = expire_after_ms
        self.settle = settle
        self.meter = meter

    def get(self, proposal_id: str) -> Proposal | None:
        raw = self.redis.get(self.keys.proposal(proposal_id))
        return Proposal.model_validate_json(str(raw)) if raw else None

    def deadline(self, proposal: Proposal) -> int:
        """Until when ``proposal`` may be applied (server time): as it records, or, made
        before proposals were timed, ``expire_after_ms`` after it was made."""
        if proposal.expires_at is not None:
            return proposal.expires_at
        return proposal.created_at + self.expire_after_ms

    def due(self, proposal: Proposal, now: int) -> bool:
        return now >= self.deadline(proposal)

    def expired(self, proposal: Proposal, now: int) -> Proposal:
        """``proposal`` expired: nobody holds it, and its deadline is written into it."""
        expired = resolved(proposal, ProposalStatus.EXPIRED, None, now)
        return expired.model_copy(update={"expires_at": self.deadline(proposal)})

    def move(self, proposal_id: str, change: Change, unless: str | None = None) -> Proposal | None:
        """The proposal as ``change`` makes it, written atomically, unless ``change`` says it
        may not move (or mutation ``unless`` has committed): then None and nothing written."""
        key = self.keys.proposal(proposal_id)
        committed = None if unless is None else self.keys.idempotency(unless)
        watched = [key] if committed is None else [key, committed]
        with self.redis.pipeline(transaction=True) as pipe:  # (a cluster client defaults to False)
            while True:
                try:
                    pipe.watch(*watched)
                    raw = pipe.get(key)
                    current = Proposal.model_validate_json(str(raw)) if raw else None
                    if current is None:
                        return None
                    now = server_ms(pipe, key)
                    moved = change(current, now)
                    if moved is None:
                        return None
                    if committed is not None and pipe.exists(committed):
                        return None
                    pipe.multi()
                    self.write(pipe, moved, now)
                    pipe.execute()
                    if (end := ending(current, moved)) is not None:
                        self.meter.count(PROPOSALS, end)
                    return moved
                except WatchError as error:
                    if (cut := watch_broken(error)) is not None:
                        raise cut from error  # Redis went away, not a conflict

    def write(self, pipe: RedisPipeline, proposal: Proposal, now: int) -> None:
        """Written whole (SET drops the key's expiry): so always with the one it must keep,
        ``KEPT_MS`` past its deadline while pending, past now once resolved."""
        data = self.settle(proposal).model_dump_json(by_alias=True)
        if proposal.status is ProposalStatus.PENDING:
            until = kept_until(self.deadline(proposal), now)
            score = self.deadline(proposal)
        else:
            until = now + KEPT_MS
            score = -until  # out of the sweep's range; pruned once its key is gone
        pipe.set(self.keys.proposal(proposal.id), data, pxat=until)
        pipe.zadd(self.keys.proposals, {proposal.id: score})


def kept_until(deadline: int, now: int) -> int:
    """When a pending proposal's key goes: ``KEPT_MS`` past its deadline (never in the
    past: a key written with an expiry gone by would be deleted at once)."""
    return max(deadline, now) + KEPT_MS
