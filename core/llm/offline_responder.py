"""The offline responder: answers a turn from templates, so the whole loop runs without a
network, and stands in whenever the model fails."""

from __future__ import annotations

import re

from core.deliberation.actions import Task
from core.deliberation.memory import ModelDelta
from core.deliberation.turn import Answer, ExecutorOutput, Turn

__all__ = ["EXPANSION", "OfflineResponder"]


class OfflineResponder:
    """Deterministic templates: the loop's behaviour without a model."""

    name = "offline"

    def answer(self, turn: Turn, correlation_id: str) -> Answer:
        return Answer(self.respond(turn), self.name)

    def respond(self, turn: Turn) -> ExecutorOutput:
        text = _clean(turn.user_input)
        current = turn.candidate.text if turn.candidate else None
        task = turn.task
        if task is Task.BRAINSTORM and text:
            idea = _idea(text)
            return ExecutorOutput(reply=f"Candidate: {idea}", candidate=idea)
        if task is Task.REFINE and current and text:
            # the latest refinement replaces the previous one: a candidate refined fifty times
            # is not fifty refinements long
            revised = f"{_base(current)} ({text[:300]})"
            return ExecutorOutput(reply=f"Revised candidate: {revised}", candidate=revised)
        if task is Task.EXPAND and current:
            expanded = f"{_base(current)} ({EXPANSION})"
            return ExecutorOutput(reply=f"Expanded: {expanded}", candidate=expanded)
        if task is Task.ALTERNATIVE:
            return ExecutorOutput(reply="Set that one aside. What other angle should we try?")
        if task is Task.COMMIT and current:
            return ExecutorOutput(reply=f'To lock in "{current}", use the button.')
        if task is Task.QUESTION and text:
            return ExecutorOutput(
                reply="I can't look that up offline; I've noted it as an open question.",
                context_state_delta=ModelDelta(add_open_questions=[text[:300]]),
            )
        if task is Task.TANGENT and current:
            return ExecutorOutput(reply=f'Noted. Back to "{current}"?')
        return ExecutorOutput(reply="Go on: what idea should we put on the table?")


EXPANSION = "owner, first step and a date to check in: to be agreed"


_REFINEMENT = re.compile(r"\s\([^()]*\)$")


_LEAD_IN = re.compile(
    r"^(how about|what about|maybe|perhaps|or|idea:|option:|suggestion:|another option:)\s+",
    re.IGNORECASE,
)


def _idea(text: str) -> str:
    """The idea itself: "how about BRB?" puts up "BRB"."""
    idea = _LEAD_IN.sub("", text).rstrip("?").strip()
    return (idea or text)[:1000]


def _base(candidate: str) -> str:
    """The candidate without its latest parenthesised refinement."""
    return _REFINEMENT.sub("", candidate)[:3000] or candidate[:3000]


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()[:4000]
