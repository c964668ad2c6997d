"""What every kind of message can end with: the beats evaluated over the new interaction
state and the view shown (``show``), or the turn handed to the responder (``turn_for``)."""

from __future__ import annotations

from core.deliberation.actions import Task
from core.deliberation.beat_evaluator import evaluate
from core.deliberation.commands import Cmd, LogEvaluation, Show
from core.deliberation.memory import Candidate, InteractionState
from core.deliberation.session import Session
from core.deliberation.turn import Turn
from core.deliberation.update.settings import LoopSettings
from core.deliberation.view import View, ViewKind, buttons_for

__all__ = ["show", "turn_for"]


def turn_for(
    settings: LoopSettings, text: str, task: Task, candidate: Candidate | None, model: Session
) -> Turn:
    return Turn(
        user_input=text,
        task=task,
        candidate=candidate,
        context_state=model.working,
        context_budget=settings.context_budget,
    )


def show(
    settings: LoopSettings,
    model: Session,
    state: InteractionState,
    correlation_id: str,
    kind: ViewKind,
    text: str,
) -> tuple[Session, list[Cmd]]:
    """Evaluate the beats on ``state``, keep the mode they set, and show the view."""
    result = evaluate(state, settings.beats)
    state = state.model_copy(update={"mode": result.mode})
    view = View(
        session_id=model.id,
        correlation_id=correlation_id,
        kind=kind,
        text=text,
        buttons=buttons_for(result, state, settings.actions),
        nudge=result.nudge,
        mode=result.mode,
        fired=result.fired,
        candidate=state.candidate,
    )
    return model.with_interaction(state), [LogEvaluation(result, correlation_id), Show(view)]
