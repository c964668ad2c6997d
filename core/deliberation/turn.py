"""A turn as a responder sees it, and what a responder answers: one stateless call that
answers a turn with a reply, maybe a new candidate, and a change to working memory. The
responders themselves (the model's and the offline one) live in ``core.llm``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Protocol

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from core.deliberation.actions import Task
from core.deliberation.memory import Candidate, ContextState, ModelDelta, ProposalRef
from core.state.actor import Actor

__all__ = [
    "DEFAULT_CONTEXT_BUDGET",
    "MIN_MEMORY",
    "Answer",
    "Answering",
    "ExecutorOutput",
    "Responder",
    "Turn",
]

DEFAULT_CONTEXT_BUDGET = 600  # characters of state per call: the candidate and working memory
MIN_MEMORY = 150  # working memory keeps at least this much room beside a long candidate


class Turn(BaseModel):
    """What a responder may know: this turn, its task, the candidate and working memory."""

    model_config = ConfigDict(frozen=True)

    user_input: str
    task: Task
    candidate: Candidate | None = None
    context_state: ContextState = Field(default_factory=ContextState)
    context_budget: int = Field(default=DEFAULT_CONTEXT_BUDGET, ge=100)


Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4000)]


class ExecutorOutput(BaseModel):
    """A model's answer, validated: a blank reply or candidate, an unknown field or a pinned
    decision makes the whole answer invalid (and the offline responder answers instead)."""

    model_config = ConfigDict(extra="forbid")

    reply: Text
    candidate: Text | None = None
    context_state_delta: ModelDelta = Field(default_factory=ModelDelta)


class Responder(Protocol):
    name: str

    def respond(self, turn: Turn) -> ExecutorOutput: ...


@dataclass(frozen=True)
class Answer:
    """What the runtime gets back from a responder: the output, who produced it, what the
    model's tool calls did (as short lines for the trace) and the proposals they made."""

    output: ExecutorOutput
    source: str
    tool_calls: list[str] = field(default_factory=list)
    proposals: list[ProposalRef] = field(default_factory=list)


class Answering(Protocol):
    # answers in this process, at once (no model to wait for, nothing done beyond the
    # session): the runtime may go on before it hears what the save before it came to
    in_process: bool

    def answer(self, turn: Turn, correlation_id: str, asker: Actor | None = None) -> Answer: ...
