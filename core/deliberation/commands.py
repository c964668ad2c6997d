"""Commands: the effects the loop asks for, as data. The runtime runs them and feeds their
results back as messages; ``update`` itself never does I/O."""

from __future__ import annotations

from dataclasses import dataclass

from core.deliberation.beat_evaluator import EvaluationResult
from core.deliberation.interpretation import ActType
from core.deliberation.messages import ActionClicked
from core.deliberation.recent import TurnContext
from core.deliberation.turn import Turn
from core.deliberation.view import View
from core.state.actor import Actor
from core.state.mutation import Mutation

__all__ = [
    "Classify",
    "Cmd",
    "Commit",
    "Generate",
    "LogEvaluation",
    "Record",
    "ResolveProposal",
    "RevertCommit",
    "Show",
    "Teach",
]


@dataclass(frozen=True)
class Record:
    """Append a line to the session's transcript (write-only: display and audit)."""

    speaker: str
    text: str
    correlation_id: str


@dataclass(frozen=True)
class Classify:
    text: str
    topic: str | None
    correlation_id: str
    actor: Actor | None = None
    context: TurnContext | None = None  # what the session knows at this turn (recent.py)


@dataclass(frozen=True)
class Generate:
    turn: Turn
    correlation_id: str
    attempt: int = 0  # asked again because the candidate moved on while it was answered
    asker: Actor | None = None  # whose turn or click it answers (never shown to the model)


@dataclass(frozen=True)
class Commit:
    """Send ``mutation`` through the gateway; its id comes from the click (idempotency)."""

    mutation: Mutation
    click: ActionClicked


@dataclass(frozen=True)
class ResolveProposal:
    """Apply (with the click's ``note`` as an edited value, for EditProposal; at once with
    its ``break_glass`` reason, for an ApplyProposal that breaks the glass) or discard (with
    the click's ``note`` as the reason) the proposal the click names."""

    apply: bool
    click: ActionClicked


@dataclass(frozen=True)
class RevertCommit:
    """Undo the mutation the click names (its id and the version it made)."""

    click: ActionClicked


@dataclass(frozen=True)
class LogEvaluation:
    result: EvaluationResult
    correlation_id: str


@dataclass(frozen=True)
class Show:
    view: View


@dataclass(frozen=True)
class Teach:
    """A click said the newest turn was misread: teach its ``marks`` to the workspace's own
    weights (``core.perception.team``) as ``was`` (None: only not ``read_as``), not
    ``read_as``."""

    marks: str
    was: ActType | None
    read_as: ActType
    correlation_id: str


Cmd = (
    Record
    | Classify
    | Generate
    | Commit
    | ResolveProposal
    | RevertCommit
    | LogEvaluation
    | Show
    | Teach
)
