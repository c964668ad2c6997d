"""The loop's update for a person's turn: ``UserSaid`` (record it, classify it),
``Classified`` (set the mode, ask for an answer) and ``AssistantReplied`` (keep the new
candidate and working memory, show the view)."""

from __future__ import annotations

import hashlib

from core.deliberation import sentences as say
from core.deliberation.actions import Task
from core.deliberation.commands import Classify, Cmd, Generate, Record
from core.deliberation.interpretation import ActType, Stance
from core.deliberation.memory import (
    MAX_ITEM_CHARS,
    MAX_ITEMS,
    Candidate,
    ContextStateDelta,
    InteractionState,
    Mode,
    ProposalRef,
    ThreadStatus,
    merge,
)
from core.deliberation.messages import AssistantReplied, Classified, UserSaid
from core.deliberation.recent import (
    OnTable,
    RecentTurn,
    TurnContext,
    asks,
    remembered,
    sketch,
)
from core.deliberation.session import Session
from core.deliberation.topics import MAX_TOPIC, topic_of
from core.deliberation.update.present import show, turn_for
from core.deliberation.update.settings import LoopSettings
from core.deliberation.view import ViewKind

__all__ = [
    "MAX_ATTEMPTS",
    "MODE_FOR",
    "candidate_id",
    "context_of",
    "on_classified",
    "on_replied",
    "on_said",
    "restored",
]

MAX_ATTEMPTS = 3  # answers made again because the candidate moved on meanwhile

MODE_FOR: dict[ActType, Mode] = {
    ActType.BRAINSTORM: Mode.EXPLORING,
    ActType.REFINE: Mode.REFINING,
    ActType.COMMIT: Mode.DECIDING,
    ActType.TANGENT: Mode.DRIFTING,
}


def on_said(settings: LoopSettings, model: Session, msg: UserSaid) -> tuple[Session, list[Cmd]]:
    state = model.interaction
    # a thread's title names it; else what the first message asks about, not its filler
    topic = state.topic or (msg.topic or "")[:MAX_TOPIC] or topic_of(msg.text)
    changed = state.model_copy(update={"turn_count": state.turn_count + 1, "topic": topic})
    cmds: list[Cmd] = [
        Record(str(msg.actor), msg.text, msg.correlation_id),
        Classify(msg.text, state.topic, msg.correlation_id, msg.actor, context_of(state, msg)),
    ]
    return model.with_interaction(changed), cmds


def context_of(state: InteractionState, msg: UserSaid) -> TurnContext:
    """What the session knows as ``msg`` arrives (``state``: before it): the last turns'
    features, what is on the table, whether it replies to someone."""
    table = None
    if state.candidate is not None:
        since = None if state.table_turn is None else max(state.turn_count - state.table_turn, 0)
        table = OnTable(words=sketch(state.candidate.text), by=state.table_by, turns_since=since)
    return TurnContext(
        writer=str(msg.actor),
        recent=tuple(state.recent),
        on_table=table,
        replying=msg.replying,
    )


def on_classified(
    settings: LoopSettings, model: Session, msg: Classified
) -> tuple[Session, list[Cmd]]:
    state, act = model.interaction, msg.routed
    stance = msg.interpretation.stance
    if stance in (Stance.BACK, Stance.DISSENT):  # still looking for the idea: no drift
        act = ActType.BRAINSTORM
    if stance is Stance.EDIT and state.candidate is not None and act is not ActType.COMMIT:
        act = ActType.REFINE  # "and announce it on the blog": a change to what is there
    # what beats see is the act the loop acts on: an unsure "commit" is a question
    seen = msg.interpretation.model_copy(update={"act_type": act})
    mode = MODE_FOR.get(act, Mode.EXPLORING if state.mode is Mode.IDLE else state.mode)
    said = RecentTurn(
        act=act,
        who=None if msg.actor is None else str(msg.actor),
        asked=asks(msg.text),
        replying=msg.replying,
        words=sketch(msg.text),
        marks=msg.marks if settings.adapt else "",  # (what a click may teach)
    )
    changed = state.model_copy(
        update={
            "last_interpretation": seen,
            "mode": mode,
            "recent": remembered(state.recent, said),
        }
    )
    if stance is Stance.BACK:
        by = None if msg.actor is None else str(msg.actor)
        return _back(settings, model.with_interaction(changed), msg.correlation_id, by)
    task = Task(act.value)
    if stance is Stance.DISSENT and changed.candidate is not None:
        return _set_aside(settings, model.with_interaction(changed), msg)
    if stance is Stance.DISSENT:  # a "no" with nothing on the table is no idea to put there
        task = Task.TANGENT
    turn = turn_for(settings, msg.text, task, changed.candidate, model)
    generate = Generate(turn, msg.correlation_id, asker=msg.actor)
    return model.with_interaction(changed), [generate]


def _set_aside(
    settings: LoopSettings, model: Session, msg: Classified
) -> tuple[Session, list[Cmd]]:
    """ "No, not that": the candidate joins the rejected ideas (with the words that turned it
    down) and the earlier candidates, and another angle is asked for, as "Try another angle"
    does."""
    state = model.interaction
    assert state.candidate is not None
    why = " ".join(msg.text.split())
    idea = f"{state.candidate.text} (rejected: {why})"
    idea = idea if len(idea) <= MAX_ITEM_CHARS else idea[: MAX_ITEM_CHARS - 2] + "…)"
    working = merge(model.working, ContextStateDelta(add_rejected_ideas=[idea]))
    changed = state.model_copy(
        update={"candidate": None, "earlier": state.set_aside(state.candidate)}
    )
    model = model.with_interaction(changed).model_copy(update={"working": working})
    turn = turn_for(settings, msg.text, Task.ALTERNATIVE, None, model)
    return model, [Generate(turn, msg.correlation_id, asker=msg.actor)]


def _back(
    settings: LoopSettings, model: Session, correlation_id: str, by: str | None
) -> tuple[Session, list[Cmd]]:
    """ "Go back to the previous one": the newest earlier candidate is on the table again, at
    its next version (its old buttons stay stale), and the one it replaces becomes the
    newest earlier one, so saying it twice goes back and forth."""
    state = model.interaction
    if not state.earlier:
        text = say.NOTHING_EARLIER
        if state.candidate is not None:
            text += f'\nOn the table: "{state.candidate.text}"'
        model, cmds = show(settings, model, state, correlation_id, ViewKind.REPLY, text)
        return model, [Record("assistant", text, correlation_id), *cmds]
    changed = restored(state, state.earlier[-1], by)
    assert changed.candidate is not None
    text = say.back_to(changed.candidate.text)
    model, cmds = show(settings, model, changed, correlation_id, ViewKind.REPLY, text)
    return model, [Record("assistant", text, correlation_id), *cmds]


def restored(
    state: InteractionState, previous: Candidate, by: str | None = None
) -> InteractionState:
    """``state`` with the earlier candidate ``previous`` on the table again, at its next
    version (its old buttons stay stale), put there by ``by`` now; the one it replaces
    becomes the newest earlier one, so going back twice goes back and forth."""
    back = previous.model_copy(update={"version": previous.version + 1})
    rest = [c for c in state.earlier if c.id != previous.id]
    earlier = rest if state.candidate is None else [*rest, state.candidate]
    return state.model_copy(
        update={
            "candidate": back,
            "earlier": earlier,
            "thread_status": ThreadStatus.OPEN,
            "table_by": by,
            "table_turn": state.turn_count,
        }
    )


def on_replied(
    settings: LoopSettings, model: Session, msg: AssistantReplied
) -> tuple[Session, list[Cmd]]:
    state = model.interaction
    moved = _moved_on(state.candidate, msg)
    if moved and state.candidate is not None and msg.attempt < MAX_ATTEMPTS:
        # someone changed the candidate while this answer was made from it (two refinements
        # at once): make it again from the candidate as it is now, so neither is lost
        turn = turn_for(settings, msg.said, msg.task, state.candidate, model)
        again = Generate(turn, msg.correlation_id, attempt=msg.attempt + 1, asker=msg.asker)
        return model, [again]
    if moved:
        text = say.MOVED_ON + (f'\n"{state.candidate.text}"' if state.candidate else "")
        return show(settings, model, state, msg.correlation_id, ViewKind.REPLY, text)
    candidate = _next_candidate(state.candidate, msg)
    replaced = state.candidate is not None and (
        candidate is None or candidate.id != state.candidate.id
    )
    changed = state.model_copy(
        update={
            "candidate": candidate,
            "earlier": state.set_aside(state.candidate)
            if replaced and state.candidate is not None
            else state.earlier,
            "pending_proposals": _add_proposals(state.pending_proposals, msg.proposals),
            "thread_status": ThreadStatus.OPEN
            if candidate is not None and candidate != state.candidate
            else state.thread_status,
        }
    )
    if candidate is not None and (state.candidate is None or candidate.id != state.candidate.id):
        asker = None if msg.asker is None else str(msg.asker)
        changed = changed.model_copy(update={"table_by": asker, "table_turn": state.turn_count})
    model = model.model_copy(
        update={"working": merge(model.working, msg.output.context_state_delta)}
    )
    reply = Record("assistant", msg.output.reply, msg.correlation_id)
    model, cmds = show(
        settings, model, changed, msg.correlation_id, ViewKind.REPLY, msg.output.reply
    )
    return model, [reply, *cmds]


def _moved_on(current: Candidate | None, msg: AssistantReplied) -> bool:
    """Whether a new version of the candidate was made from one that is no longer on the
    table: another version of it, or another candidate altogether."""
    base = msg.based_on
    if not msg.task.keeps_candidate or msg.output.candidate is None or base is None:
        return False
    return current is None or (current.id, current.version) != (base.id, base.version)


def candidate_id(correlation_id: str) -> str:
    return "c" + hashlib.blake2s(correlation_id.encode(), digest_size=6).hexdigest()


def _next_candidate(current: Candidate | None, msg: AssistantReplied) -> Candidate | None:
    """What is on the table after an answer. A commit turn never swaps it (the button commits
    what was shown); with nothing on the table, a commit turn's proposal is put there. A
    refinement or an expansion is a new version of the same candidate, and a refinement's
    words join its ``refinements``."""
    text = msg.output.candidate
    if text is None or (current is not None and msg.task is Task.COMMIT):
        return current
    if current is not None and msg.task.keeps_candidate:
        if text == current.text:
            return current
        refinements = current.refinements
        said = " ".join(msg.said.split())[:300]
        if msg.task is Task.REFINE and said:
            refinements = (*refinements, said)[-MAX_ITEMS:]
        return Candidate(
            id=current.id, text=text, version=current.version + 1, refinements=refinements
        )
    return Candidate(id=candidate_id(msg.correlation_id), text=text)


def _add_proposals(pending: list[ProposalRef], new: list[ProposalRef]) -> list[ProposalRef]:
    known = {p.id for p in pending}
    return [*pending, *(p for p in new if p.id not in known)][-MAX_ITEMS:]
