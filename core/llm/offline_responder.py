"""The offline responder: answers a turn from templates, so the whole loop runs without a
network, and stands in whenever the model fails."""

from __future__ import annotations

import re

from core.deliberation.actions import Task
from core.deliberation.memory import ModelDelta
from core.deliberation.topics import asks_for_ideas, without_asking
from core.deliberation.turn import Answer, ExecutorOutput, Turn
from core.llm.offline_edits import edit
from core.state.actor import Actor

__all__ = ["OfflineResponder"]


class OfflineResponder:
    """Deterministic templates: the loop's behaviour without a model."""

    name = "offline"
    in_process = True

    def answer(self, turn: Turn, correlation_id: str, asker: Actor | None = None) -> Answer:
        return Answer(self.respond(turn), self.name)

    def respond(self, turn: Turn) -> ExecutorOutput:
        text = _clean(turn.user_input)
        current = turn.candidate.text if turn.candidate else None
        task = turn.task
        if task is Task.BRAINSTORM and text and asks_for_ideas(text):
            # "We need to pick a database for billing. Ideas?" names the topic, not an idea
            return ExecutorOutput(reply="What options do you have in mind? Name one.")
        if task is Task.BRAINSTORM and text:
            idea = _idea(without_asking(text))
            return ExecutorOutput(reply=f"Candidate: {idea}", candidate=idea)
        if task is Task.REFINE and current and text:
            return _refined(current, text)
        if task is Task.EXPAND and current:
            # only people know who, what first and when: ask, never write filler for them
            ask = f'To act on "{_short(current)}": who owns it, what is the first step, and when '
            return ExecutorOutput(
                reply=f"{ask}do we check in? Say them and I'll add them.",
                context_state_delta=ModelDelta(add_open_questions=[f"{ask}do we check in?"]),
            )
        if task is Task.ALTERNATIVE:
            return ExecutorOutput(reply="Set that one aside. What other angle should we try?")
        if task is Task.COMMIT and current:
            return ExecutorOutput(reply=f'To lock in "{current}", use the button.')
        if task is Task.COMMIT and (decided := _decided(text)):
            return ExecutorOutput(
                reply=f'On the table: "{decided}". To lock it in, use the button.',
                candidate=decided,
            )
        if task is Task.QUESTION and text:
            return ExecutorOutput(
                reply="I can't look that up offline; I've noted it as an open question.",
                context_state_delta=ModelDelta(add_open_questions=[text[:300]]),
            )
        if task is Task.TANGENT and current:
            return ExecutorOutput(reply=f'Noted. Back to "{current}"?')
        return ExecutorOutput(reply="Go on: what idea should we put on the table?")


MAX_CANDIDATE = 4000

_LEAD_IN = re.compile(
    r"^(how about|what about|maybe|perhaps|or|idea:|option:|suggestion:|another option:)\s+",
    re.IGNORECASE,
)
# "let's go with X", "ok, we'll use X", "decision: X": a decision said outright, with X in it
_DECIDE = re.compile(
    r"^(?:(?:ok(?:ay)?|so|alright|right|yes|yeah|fine|then)[,.!]?\s+)*"
    r"(?:let'?s|let us|we'?ll|we will|we should|we'?re going|i vote (?:for|we)|decision:|"
    r"decided:|agreed:)\s*"
    r"(?:to\s+)?(?:go (?:with|for)|use|pick|choose|take|adopt|ship|do|settle on|stick with|"
    r"run with)?\s*",
    re.IGNORECASE,
)
_NOT_AN_IDEA = frozenset(
    ["", "it", "that", "this", "that one", "this one", "ahead", "them", "those", "so", "with it"]
)


def _idea(text: str) -> str:
    """The idea itself: "how about BRB?" puts up "BRB"."""
    idea = _LEAD_IN.sub("", text).rstrip("?").strip()
    return (idea or text)[:1000]


def _refined(current: str, text: str) -> ExecutorOutput:
    """The candidate as the refinement edits it (``offline_edits``): a replacement or a
    removal where its words stand in it, else an addition after the earlier ones. Nothing
    people said is dropped (one already in it is not added twice; one that would make it too
    long is refused, and the candidate stays as it is)."""
    edited = edit(current, text)
    if edited is None:
        return ExecutorOutput(reply=f'That is already in it: "{current}"')
    if len(edited.text) > MAX_CANDIDATE:
        return ExecutorOutput(
            reply=f"That would make the candidate longer than {MAX_CANDIDATE:,} characters: "
            "lock it in or set it aside first. It stays as it was."
        )
    return ExecutorOutput(reply=f"Revised candidate: {edited.text}", candidate=edited.text)


def _decided(text: str) -> str | None:
    """What a decision said outright decides ("let's go with managed postgres" puts up
    "managed postgres"), or None when it names nothing ("let's do it")."""
    found = _DECIDE.match(text)
    if found is None:
        return None
    rest = text[found.end() :].strip(" .!,;:")
    return rest[:1000] if rest.casefold() not in _NOT_AN_IDEA else None


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()[:4000]
