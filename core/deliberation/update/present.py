"""What every kind of message can end with: the beats evaluated over the new interaction
state and the view shown (``show``), or the turn handed to the responder (``turn_for``)."""

from __future__ import annotations

from core.deliberation.actions import PROPOSAL_ACTIONS, Task
from core.deliberation.beat_evaluator import EvaluationResult, evaluate, nudge_text
from core.deliberation.commands import Cmd, LogEvaluation, Show
from core.deliberation.memory import Candidate, InteractionState
from core.deliberation.session import Session
from core.deliberation.topics import decision_key
from core.deliberation.turn import Turn
from core.deliberation.update.settings import LoopSettings
from core.deliberation.view import Button, View, ViewKind, buttons_for

__all__ = ["notice", "show", "to_asker", "turn_for"]


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
    extra: list[Button] | None = None,
    reverts_at: int | None = None,
) -> tuple[Session, list[Cmd]]:
    """Evaluate the beats on ``state``, keep the mode they set, and show the view (with the
    ``extra`` buttons after the beats' own: an "Undo"; ``reverts_at``: when the change it
    says was committed reverts by itself), with the deadlines of the proposal whose buttons
    it carries."""
    result = evaluate(state, settings.beats)
    state = state.model_copy(update={"mode": result.mode})
    buttons = buttons_for(result, state, settings.actions) + (extra or [])
    shown = {b.target_id for b in buttons if b.action in PROPOSAL_ACTIONS}
    proposal = next((p for p in state.pending_proposals if p.id in shown), None)
    view = View(
        session_id=model.id,
        correlation_id=correlation_id,
        kind=kind,
        text=text,
        buttons=buttons,
        nudge=_open_nudge(settings, result, buttons, state),
        mode=result.mode,
        fired=result.fired,
        candidate=state.candidate,
        decides=decision_key(settings.keys, state),
        expires_at=None if proposal is None else proposal.expires_at,
        lasts_sec=None if proposal is None else proposal.for_sec,
        reverts_at=reverts_at,
    )
    return model.with_interaction(state), [LogEvaluation(result, correlation_id), Show(view)]


def _open_nudge(
    settings: LoopSettings,
    result: EvaluationResult,
    buttons: list[Button],
    state: InteractionState,
) -> str | None:
    """The nudge of the first fired beat that still offers something: a beat whose buttons
    were all done already ("Switch the stream to BRB?" after the switch) says nothing more."""
    beats = {beat.id: beat for beat in settings.beats}
    offered = {button.beat for button in buttons}
    for fired in result.fired:
        beat = beats.get(fired)
        if beat is None or not beat.nudge:
            continue
        surfaced = any(action.beat == fired for action in result.actions)
        if not surfaced or fired in offered:
            return nudge_text(beat.nudge, state)
    return None


def notice(model: Session, correlation_id: str, text: str) -> Show:
    """A word for the one person who asked (a refused click, a refused rename)."""
    view = View(
        session_id=model.id,
        correlation_id=correlation_id,
        kind=ViewKind.NOTICE,
        text=text,
        mode=model.interaction.mode,
        ephemeral=True,
    )
    return Show(view)


def to_asker(cmd: Cmd) -> Cmd:
    """A ``Show`` for the one person who asked (a stale click's current view, a look at the
    session); any other command as it is."""
    if isinstance(cmd, Show):
        return Show(cmd.view.model_copy(update={"ephemeral": True}))
    return cmd
