"""The loop: ``Loop.update(model, msg) -> (model, cmds)``, in the Elm architecture.

Pure and app-owned: no I/O, no model, no canonical state. The model is the session (its
interaction state and working memory); effects are commands for the runtime, whose results
come back as messages::

    UserSaid -> Classify -> Classified -> Generate -> AssistantReplied -> evaluate -> Show
    ActionClicked -> Commit | ResolveProposal | Generate -> ActionDone -> evaluate -> Show

Plain chat can reach canonical state only as far as the model's tools propose; a commit
comes from a click.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.actions import AppAction, KeyTemplates, Task
from core.beats import Beat
from core.clicks import on_clicked, on_done
from core.commands import Classify, Cmd, Generate, LogEvaluation, Record, Show
from core.evaluator import evaluate
from core.executor import DEFAULT_CONTEXT_BUDGET, Turn
from core.interpretation import ActType
from core.memory import (
    MAX_ITEMS,
    Candidate,
    InteractionState,
    Mode,
    ProposalRef,
    ThreadStatus,
    merge,
)
from core.messages import ActionClicked, ActionDone, AssistantReplied, Classified, Msg, UserSaid
from core.sessions import Session
from core.view import View, ViewKind, buttons_for

if TYPE_CHECKING:
    from core.config import CoreConfig

__all__ = ["Loop", "LoopSettings"]

MODE_FOR: dict[ActType, Mode] = {
    ActType.BRAINSTORM: Mode.EXPLORING,
    ActType.REFINE: Mode.REFINING,
    ActType.COMMIT: Mode.DECIDING,
    ActType.TANGENT: Mode.DRIFTING,
}


@dataclass(frozen=True)
class LoopSettings:
    beats: tuple[Beat, ...] = ()
    actions: Mapping[str, AppAction] = field(default_factory=dict)
    keys: KeyTemplates = field(default_factory=KeyTemplates)
    min_confidence: float = 0.5
    context_budget: int = DEFAULT_CONTEXT_BUDGET

    @classmethod
    def from_config(cls, config: CoreConfig) -> LoopSettings:
        d = config.deliberation
        return cls(
            beats=tuple(config.beats),
            actions=dict(config.actions),
            keys=KeyTemplates(
                decision_key=d.decision_key,
                artifact_key=d.artifact_key,
                entity_prefix=d.entity_prefix,
            ),
            min_confidence=config.perception.min_confidence,
            context_budget=d.context_budget_chars,
        )


class Loop:
    def __init__(self, settings: LoopSettings) -> None:
        self.settings = settings

    def update(self, model: Session, msg: Msg) -> tuple[Session, list[Cmd]]:
        if isinstance(msg, UserSaid):
            return self._said(model, msg)
        if isinstance(msg, Classified):
            return self._classified(model, msg)
        if isinstance(msg, AssistantReplied):
            return self._replied(model, msg)
        if isinstance(msg, ActionClicked):
            return on_clicked(self, model, msg)
        if isinstance(msg, ActionDone):
            return on_done(self, model, msg)
        raise TypeError(f"not a message: {type(msg).__name__}")

    def _said(self, model: Session, msg: UserSaid) -> tuple[Session, list[Cmd]]:
        state = model.interaction
        topic = state.topic or (msg.topic or msg.text.strip())[:200] or None
        changed = state.model_copy(update={"turn_count": state.turn_count + 1, "topic": topic})
        cmds: list[Cmd] = [
            Record(str(msg.actor), msg.text, msg.correlation_id),
            Classify(msg.text, state.topic, msg.correlation_id),
        ]
        return model.with_interaction(changed), cmds

    def _classified(self, model: Session, msg: Classified) -> tuple[Session, list[Cmd]]:
        state, act = model.interaction, msg.routed
        # what beats see is the act the loop acts on: an unsure "commit" is a question
        seen = msg.interpretation.model_copy(update={"act_type": act})
        mode = MODE_FOR.get(act, Mode.EXPLORING if state.mode is Mode.IDLE else state.mode)
        changed = state.model_copy(update={"last_interpretation": seen, "mode": mode})
        turn = self.turn(msg.text, Task(act.value), changed.candidate, model)
        return model.with_interaction(changed), [Generate(turn, msg.correlation_id)]

    def _replied(self, model: Session, msg: AssistantReplied) -> tuple[Session, list[Cmd]]:
        state = model.interaction
        candidate = _next_candidate(state.candidate, msg)
        changed = state.model_copy(
            update={
                "candidate": candidate,
                "pending_proposals": _add_proposals(state.pending_proposals, msg.proposals),
                "thread_status": ThreadStatus.OPEN
                if candidate is not None and candidate != state.candidate
                else state.thread_status,
            }
        )
        model = model.model_copy(
            update={"working": merge(model.working, msg.output.context_state_delta)}
        )
        reply = Record("assistant", msg.output.reply, msg.correlation_id)
        model, cmds = self.show(
            model, changed, msg.correlation_id, ViewKind.REPLY, msg.output.reply
        )
        return model, [reply, *cmds]

    def turn(self, text: str, task: Task, candidate: Candidate | None, model: Session) -> Turn:
        return Turn(
            user_input=text,
            task=task,
            candidate=candidate,
            context_state=model.working,
            context_budget=self.settings.context_budget,
        )

    def show(
        self,
        model: Session,
        state: InteractionState,
        correlation_id: str,
        kind: ViewKind,
        text: str,
    ) -> tuple[Session, list[Cmd]]:
        """Evaluate the beats on ``state``, keep the mode they set, and show the view."""
        result = evaluate(state, self.settings.beats)
        state = state.model_copy(update={"mode": result.mode})
        view = View(
            session_id=model.id,
            correlation_id=correlation_id,
            kind=kind,
            text=text,
            buttons=buttons_for(result, state, self.settings.actions),
            nudge=result.nudge,
            mode=result.mode,
            fired=result.fired,
            candidate=state.candidate,
        )
        return model.with_interaction(state), [LogEvaluation(result, correlation_id), Show(view)]


def candidate_id(correlation_id: str) -> str:
    return "c" + hashlib.blake2s(correlation_id.encode(), digest_size=6).hexdigest()


def _next_candidate(current: Candidate | None, msg: AssistantReplied) -> Candidate | None:
    text = msg.output.candidate
    if text is None:
        return current
    if current is not None and msg.task.keeps_candidate:
        if text == current.text:
            return current
        return Candidate(id=current.id, text=text, version=current.version + 1)
    return Candidate(id=candidate_id(msg.correlation_id), text=text)


def _add_proposals(pending: list[ProposalRef], new: list[ProposalRef]) -> list[ProposalRef]:
    known = {p.id for p in pending}
    return [*pending, *(p for p in new if p.id not in known)][-MAX_ITEMS:]
