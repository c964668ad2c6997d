"""What the gateway answers: committed or rejected (as the store answers a commit) or pending,
an agent's proposal waiting for a person with the right role."""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from core.state.actor import Actor
from core.state.commit_result import Committed, Rejected, outcome_fields
from core.state.mutation import Mutation, new_id

__all__ = ["Outcome", "Pending", "Proposal", "ProposalStatus"]


class ProposalStatus(StrEnum):
    PENDING = "pending"
    APPLIED = "applied"
    DISCARDED = "discarded"


class Proposal(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    id: str = Field(default_factory=new_id)  # the proposed mutation's id
    mutation: Mutation
    created_at: int = Field(default_factory=lambda: int(time.time() * 1000))
    status: ProposalStatus = ProposalStatus.PENDING
    resolved_by: Actor | None = None  # who applied (or is applying) or discarded it
    resolved_at: int | None = None  # when, epoch milliseconds

    @property
    def proposed_by(self) -> Actor:
        return self.mutation.actor

    def summary(self) -> str:
        m = self.mutation
        value = "" if m.value is None else f" = {m.value}"
        return f"{m.op.value} {m.key}{value}"


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
