"""The two session tiers of memory, kept apart from canonical state (the store):

- interaction state: the current turn's situation (mode, current candidate, last
  interpretation, turn count, thread status);
- working memory: ``context_state``, the structured summary every model call receives instead
  of prior turns, changed only by validated deltas.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from core.cached_models import Copied
from core.deliberation.interpretation import TurnInterpretation
from core.deliberation.recent import MAX_RECENT, RecentTurn

__all__ = [
    "MAX_CLICKS",
    "MAX_EARLIER",
    "MAX_ITEMS",
    "MAX_ITEM_CHARS",
    "Candidate",
    "ClickRecord",
    "ClickStatus",
    "ContextState",
    "ContextStateDelta",
    "InteractionState",
    "Mode",
    "ModelDelta",
    "ProposalRef",
    "ThreadStatus",
    "merge",
]

MAX_ITEMS = 20  # per list in context_state: the oldest items give way to new ones
MAX_EARLIER = 5  # earlier candidates a session keeps, to go back to
MAX_CLICKS = 50  # clicks remembered per session (idempotency of clicks on older ones is the
# gateway's: a click's mutation id is derived from the click id)
MAX_ITEM_CHARS = 300  # characters of one item of working memory
Item = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_ITEM_CHARS)
]


class Mode(StrEnum):
    IDLE = "idle"
    EXPLORING = "exploring"
    REFINING = "refining"
    DECIDING = "deciding"
    DRIFTING = "drifting"


class ThreadStatus(StrEnum):
    OPEN = "open"
    DECIDED = "decided"
    CLOSED = "closed"


class Candidate(Copied):
    """The idea on the table. Its version grows with every change, so a button rendered for
    version 3 is stale once the candidate is at version 4. ``refinements``: every change
    people asked of it since it was put on the table, in order, so a rewrite keeps them all."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1, max_length=64)
    text: str = Field(min_length=1, max_length=4000)
    version: int = Field(default=1, ge=1)
    refinements: tuple[Item, ...] = Field(default=(), max_length=MAX_ITEMS)


class ProposalRef(BaseModel):
    """An agent proposal waiting in this session: enough to render its button."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1, max_length=128)
    summary: str = Field(max_length=300)
    protected: bool = False
    value: str = Field(default="", max_length=3000)  # as an edit box shows it
    editable: bool = True  # a value to edit (a delete has none)
    revision: int = Field(default=0, ge=0)  # edits so far: its buttons name the one shown
    # the role that may apply it at once, with a reason (its key's break-glass role; None:
    # nobody may): its Apply button offers "Break glass" beside it
    break_glass: str | None = Field(default=None, max_length=64)
    expires_at: int | None = None  # until when it may be applied (the Redis server's ms)
    for_sec: float | None = None  # once applied, it reverts by itself this long after


class ClickStatus(StrEnum):
    PENDING = "pending"  # its command is on its way (a retry of the same click resends it)
    DONE = "done"
    FAILED = "failed"  # rejected: someone else (with the right role) may click again


class ClickRecord(Copied):
    """A click on an action of one candidate (or proposal) version, so that a second person's
    click on the same button does not do it twice."""

    model_config = ConfigDict(frozen=True)

    click_id: str
    action: str
    target_id: str
    version: int
    by: str
    status: ClickStatus = ClickStatus.PENDING


class InteractionState(Copied):
    model_config = ConfigDict(extra="forbid")

    mode: Mode = Mode.IDLE
    topic: str | None = Field(default=None, max_length=200)
    candidate: Candidate | None = None
    last_interpretation: TurnInterpretation | None = None
    turn_count: int = Field(default=0, ge=0)
    thread_status: ThreadStatus = ThreadStatus.OPEN
    pending_proposals: list[ProposalRef] = Field(default_factory=list, max_length=MAX_ITEMS)
    clicks: list[ClickRecord] = Field(default_factory=list, max_length=MAX_CLICKS)
    # the version of each decision this session committed: it may change its own decision,
    # never silently overwrite one another thread made
    decided: dict[str, int] = Field(default_factory=dict, max_length=MAX_CLICKS)
    # mutation ids this session's clicks committed: an "Undo" may revert these, no other
    undoable: list[str] = Field(default_factory=list, max_length=MAX_CLICKS)
    # candidates that were on the table before this one, newest last: "go back to the
    # previous one" brings the newest back
    earlier: list[Candidate] = Field(default_factory=list, max_length=MAX_EARLIER)
    # the last few turns as features, oldest first (recent.py): the next turn is read with them
    recent: list[RecentTurn] = Field(default_factory=list, max_length=MAX_RECENT)
    # who asked for the candidate on the table (an actor id), and at which turn (turn_count)
    table_by: str | None = Field(default=None, max_length=160)
    table_turn: int | None = Field(default=None, ge=0)

    def set_aside(self, candidate: Candidate) -> list[Candidate]:
        """``earlier`` with ``candidate`` as its newest (once: an older copy of it goes)."""
        kept = [c for c in self.earlier if c.id != candidate.id]
        return [*kept, candidate][-MAX_EARLIER:]


class ContextState(Copied):
    """What a model call may know of the session: never the transcript itself."""

    model_config = ConfigDict(extra="forbid")

    summary: str = Field(default="", max_length=2000)
    constraints: list[Item] = Field(default_factory=list, max_length=MAX_ITEMS)
    open_questions: list[Item] = Field(default_factory=list, max_length=MAX_ITEMS)
    rejected_ideas: list[Item] = Field(default_factory=list, max_length=MAX_ITEMS)
    pinned_decisions: list[Item] = Field(default_factory=list, max_length=MAX_ITEMS)


class ContextStateDelta(BaseModel):
    """A model's proposed change to working memory; validated before it is merged."""

    model_config = ConfigDict(extra="forbid")

    summary: str | None = Field(default=None, max_length=2000)
    add_constraints: list[Item] = Field(default_factory=list, max_length=MAX_ITEMS)
    add_open_questions: list[Item] = Field(default_factory=list, max_length=MAX_ITEMS)
    resolve_questions: list[Item] = Field(default_factory=list, max_length=MAX_ITEMS)
    add_rejected_ideas: list[Item] = Field(default_factory=list, max_length=MAX_ITEMS)
    pin_decisions: list[Item] = Field(default_factory=list, max_length=MAX_ITEMS)


class ModelDelta(ContextStateDelta):
    """What a model may change in working memory: everything but the pinned decisions. Only
    a committed click pins one; a model that says something was decided has not made it so."""

    pin_decisions: list[Item] = Field(default_factory=list, max_length=0)


def _grow(items: list[str], new: list[str], drop: Sequence[str] = ()) -> list[str]:
    """Remove ``drop``, then add ``new`` at the newest end (an item already there moves up:
    compared case-insensitively), and keep the newest ``MAX_ITEMS``."""
    gone = {d.casefold() for d in drop}
    fresh: dict[str, str] = {}
    for item in new:
        if item.casefold() not in gone:
            fresh.pop(item.casefold(), None)
            fresh[item.casefold()] = item
    kept = [i for i in items if i.casefold() not in gone and i.casefold() not in fresh]
    return [*kept, *fresh.values()][-MAX_ITEMS:]


def merge(state: ContextState, delta: ContextStateDelta) -> ContextState:
    """Pure: the working memory after ``delta``. Merging the same delta twice changes nothing
    more than merging it once."""
    return ContextState(
        summary=state.summary if delta.summary is None else delta.summary,
        constraints=_grow(state.constraints, delta.add_constraints),
        open_questions=_grow(
            state.open_questions, delta.add_open_questions, delta.resolve_questions
        ),
        rejected_ideas=_grow(state.rejected_ideas, delta.add_rejected_ideas),
        pinned_decisions=_grow(state.pinned_decisions, delta.pin_decisions),
    )
