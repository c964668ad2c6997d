"""What the gateway answers: committed or rejected (as the store answers a commit) or pending,
an agent's proposal waiting for a person with the right role; and the proposal itself, which
keeps what applying it committed, or until when it may be applied."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from core.state.actor import Actor
from core.state.codec import entry_meta
from core.state.commit_result import Committed, Rejected, outcome_fields
from core.state.mutation import Mutation, new_id

__all__ = [
    "AppliedCommit",
    "Outcome",
    "Pending",
    "Proposal",
    "ProposalStatus",
    "expired_message",
]


class ProposalStatus(StrEnum):
    PENDING = "pending"
    APPLIED = "applied"
    DISCARDED = "discarded"
    EXPIRED = "expired"  # nobody applied it before its deadline: it never will be


class AppliedCommit(BaseModel):
    """What applying a proposal committed, kept in the proposal for as long as it is kept: the
    mutation's idempotency record may expire long before, and a click after that is answered
    from here (never by committing again)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    mutation: Mutation  # as committed: the applier is its actor, the agent its proposedBy
    version: int
    log_id: str
    ts: int
    value_json: str | None = None  # the value it left (None after a delete)
    expires_at: int | None = None

    @classmethod
    def of(cls, done: Committed) -> AppliedCommit:
        return cls(
            mutation=done.request,
            version=done.version,
            log_id=done.log_id,
            ts=done.ts,
            value_json=done.value_json,
            expires_at=done.expires_at,
        )

    def again(self) -> Committed:
        """The commit's result once more, as the store answers a repeated mutation id."""
        m = self.mutation
        return Committed(
            m,
            self.version,
            self.log_id,
            self.ts,
            self.value_json,
            self.expires_at,
            entry_meta(m),
            duplicate=True,
        )


class Proposal(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    id: str = Field(default_factory=new_id)  # the proposed mutation's id
    mutation: Mutation
    created_at: int = Field(default_factory=lambda: int(time.time() * 1000))
    # until when it may be applied, epoch milliseconds of the Redis server's clock; None on
    # a pending proposal made by a version that did not time them (ProposalBox.deadline)
    expires_at: int | None = None
    status: ProposalStatus = ProposalStatus.PENDING
    resolved_by: Actor | None = None  # who applied (or is applying) or discarded it
    # when, epoch milliseconds of the Redis server's clock; None on a proposal applied by a
    # version that did not time claims (count it as applied)
    resolved_at: int | None = None
    committed: AppliedCommit | None = None  # set once, right after the commit: applied for good

    @property
    def proposed_by(self) -> Actor:
        return self.mutation.actor

    def summary(self) -> str:
        m = self.mutation
        value = "" if m.value is None else f" = {m.value}"
        return f"{m.op.value} {m.key}{value}"


def expired_message(deadline_ms: int) -> str:
    """What a click on a proposal past its deadline is told."""
    at = datetime.fromtimestamp(deadline_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"this proposal expired at {at}; nothing was changed"


@dataclass(frozen=True)
class Pending:
    mutation: Mutation
    proposal: Proposal

    name: ClassVar[str] = "pending"

    def to_dict(self) -> dict[str, Any]:
        return outcome_fields(self.name, self.mutation) | {
            "proposalId": self.proposal.id,
            "message": f"proposed by {self.mutation.actor}; "
            "a person with the right role applies it",
        }


Outcome = Committed | Rejected | Pending
