"""The loop's update for clicks, ``ActionClicked`` and ``ActionDone`` (pure, like the rest of
it): a click is checked against the session it was rendered for, then becomes at most one
command; the command's result updates the session and the view.

A click carries only identification. Here it is checked for staleness (the candidate moved
on), for being done already (someone's click on the same version finished), and for being a
retry of itself (the same click id). A click's mutation id is derived from what it acts on
(session, action, target, version), not from who clicked: any number of clicks on one
version, retried, racing or left half-done by a process that died, commit once through the
gateway's idempotency. Permission is the gateway's: policy checks the clicker's roles.
"""

from __future__ import annotations

import hashlib
import re

from core.deliberation import sentences as say
from core.deliberation.actions import (
    PROPOSAL_ACTIONS,
    ActionType,
    Effect,
    builtin_effect,
    is_builtin,
)
from core.deliberation.beats import ActionStyle
from core.deliberation.commands import (
    Cmd,
    Commit,
    Generate,
    ResolveProposal,
    RevertCommit,
    Teach,
)
from core.deliberation.interpretation import ActType as Act
from core.deliberation.memory import (
    MAX_CLICKS,
    MAX_ITEM_CHARS,
    MAX_ITEMS,
    Candidate,
    ClickRecord,
    ClickStatus,
    ContextStateDelta,
    InteractionState,
    ProposalRef,
    ThreadStatus,
    merge,
)
from core.deliberation.messages import ID_PATTERN, ActionClicked, ActionDone, OutcomeNote
from core.deliberation.placeholders import placeholder_in
from core.deliberation.session import Session
from core.deliberation.topics import topic_part
from core.deliberation.update.present import notice, show, to_asker, turn_for
from core.deliberation.update.settings import LoopSettings
from core.deliberation.update.turns import restored
from core.deliberation.view import Button, ViewKind
from core.state.mutation import Mutation

__all__ = ["action_mutation_id", "on_clicked", "on_done"]

# the acts of a turn that leave the candidate as it was (an idea replaces it, a refinement
# makes its next version): only such a turn can be told apart from the click after it
_LEFT_AS_IT_WAS = frozenset({Act.TANGENT, Act.QUESTION, Act.COMMIT})


def on_clicked(
    settings: LoopSettings, model: Session, msg: ActionClicked
) -> tuple[Session, list[Cmd]]:
    state = model.interaction
    if not (is_builtin(msg.action) or msg.action in settings.actions):
        return model, [_notice(model, msg, say.unknown_action(msg.action))]
    earlier = next((c for c in state.clicks if c.click_id == msg.click_id), None)
    if earlier is not None:
        return _again(settings, model, msg, earlier)
    if msg.action in PROPOSAL_ACTIONS:
        return _on_proposal(model, msg)
    if msg.action == ActionType.RESTORE_CANDIDATE:
        return _restore(settings, model, msg)
    if msg.action == ActionType.REVERT_MUTATION:
        if msg.target_id not in state.undoable:  # only what a click here committed
            return model, [_notice(model, msg, say.NOTHING_TO_UNDO)]
        changed = _record(state, msg, ClickStatus.PENDING)
        return model.with_interaction(changed), [RevertCommit(msg)]
    if not _on_current(state, msg):
        return _stale(settings, model, msg)
    done = _done_before(state, msg)
    if done is not None:
        return model, [_notice(model, msg, say.already_done(done.by))]
    effect = _effect(settings, model, msg)
    if effect.generate is not None:
        return _generate(settings, model, msg, effect)
    assert state.candidate is not None  # _on_current
    filler = placeholder_in(state.candidate.text)
    if filler is not None:
        return model, [_notice(model, msg, say.placeholder(filler))]
    return _commit(settings, model, msg, effect)


def _again(
    settings: LoopSettings, model: Session, msg: ActionClicked, earlier: ClickRecord
) -> tuple[Session, list[Cmd]]:
    """The same click delivered again (a retry, a double delivery). Still on its way: send its
    command again, which commits at most once, as long as the candidate is still the version
    it was made for. Finished: say so, change nothing."""
    if earlier.status is ClickStatus.PENDING and msg.action in PROPOSAL_ACTIONS:
        return model, [ResolveProposal(msg.action != ActionType.DISCARD_PROPOSAL, msg)]
    if earlier.status is ClickStatus.PENDING and msg.action == ActionType.REVERT_MUTATION:
        return model, [RevertCommit(msg)]
    if earlier.status is ClickStatus.PENDING:
        if not _on_current(model.interaction, msg):
            return _stale(settings, model, msg)
        effect = _effect(settings, model, msg)
        if effect.op is not None:
            return model, [Commit(_mutation(model, msg, effect), msg)]
    return model, [_notice(model, msg, say.already_handled(earlier.status))]


def _restore(
    settings: LoopSettings, model: Session, msg: ActionClicked
) -> tuple[Session, list[Cmd]]:
    """ "Back to: ...": that earlier candidate, as it was when the button was shown, is on
    the table again (a button for one no longer kept, or changed since, is stale)."""
    state = model.interaction
    previous = next(
        (c for c in state.earlier if (c.id, c.version) == (msg.target_id, msg.expected_version)),
        None,
    )
    if previous is None:
        return _stale(settings, model, msg)
    changed = _record(restored(state, previous, str(msg.actor)), msg, ClickStatus.DONE)
    assert changed.candidate is not None
    text = say.back_to(changed.candidate.text)
    return show(settings, model, changed, msg.correlation_id, ViewKind.OUTCOME, text)


def _on_proposal(model: Session, msg: ActionClicked) -> tuple[Session, list[Cmd]]:
    state = model.interaction
    if all(p.id != msg.target_id for p in state.pending_proposals):
        return model, [_notice(model, msg, say.NO_LONGER_PENDING)]
    changed = _record(state, msg, ClickStatus.PENDING)
    apply = msg.action != ActionType.DISCARD_PROPOSAL
    return model.with_interaction(changed), [ResolveProposal(apply, msg)]


def _stale(settings: LoopSettings, model: Session, msg: ActionClicked) -> tuple[Session, list[Cmd]]:
    state = model.interaction
    text = say.STALE if state.candidate else say.GONE
    if state.candidate:
        text += f'\n"{state.candidate.text}"'
    _, cmds = show(settings, model, state, msg.correlation_id, ViewKind.NOTICE, text)
    return model, [to_asker(c) for c in cmds]


def _on_current(state: InteractionState, msg: ActionClicked) -> bool:
    """Whether the click was made on the candidate as it is now (same id, same version)."""
    candidate = state.candidate
    return candidate is not None and (candidate.id, candidate.version) == (
        msg.target_id,
        msg.expected_version,
    )


def _done_before(state: InteractionState, msg: ActionClicked) -> ClickRecord | None:
    """A finished click on the same action and version. One still on its way does not count:
    this click sends the same mutation, which commits once whichever arrives first."""
    return next(
        (
            c
            for c in state.clicks
            if (c.action, c.target_id, c.version)
            == (msg.action, msg.target_id, msg.expected_version)
            and c.status is ClickStatus.DONE
        ),
        None,
    )


def _effect(settings: LoopSettings, model: Session, msg: ActionClicked) -> Effect:
    state = model.interaction
    assert state.candidate is not None
    text = state.candidate.text
    topic = topic_part(state) or state.candidate.id
    if is_builtin(msg.action):
        click = hashlib.blake2s(msg.click_id.encode(), digest_size=4).hexdigest()
        entity = f"{state.candidate.id}-{click}"  # platform click ids may hold any character
        return builtin_effect(ActionType(msg.action), text, topic, entity, settings.keys)
    app = settings.actions[msg.action]
    return Effect(op=app.op, key=app.key, value=app.value_for(text, topic))


def _generate(
    settings: LoopSettings, model: Session, msg: ActionClicked, effect: Effect
) -> tuple[Session, list[Cmd]]:
    state = model.interaction
    assert effect.generate is not None and state.candidate is not None
    working = model.working
    candidate: Candidate | None = state.candidate
    if effect.reject_candidate:
        set_aside = ContextStateDelta(add_rejected_ideas=[state.candidate.text[:MAX_ITEM_CHARS]])
        working = merge(working, set_aside)
        candidate = None
    changed = _record(state, msg, ClickStatus.DONE).model_copy(update={"candidate": candidate})
    if candidate is None:  # set aside: "go back to the previous one" brings it back
        changed = changed.model_copy(update={"earlier": state.set_aside(state.candidate)})
    lesson: list[Cmd] = []
    if msg.action == ActionType.ALTERNATIVE_CURRENT:  # "Try another angle": no agreement
        changed, lesson = _taught(settings, changed, None, msg.correlation_id)
    model = model.with_interaction(changed).model_copy(update={"working": working})
    turn = turn_for(settings, "", effect.generate, candidate, model)
    return model, [Generate(turn, msg.correlation_id, asker=msg.actor), *lesson]


def _commit(
    settings: LoopSettings, model: Session, msg: ActionClicked, effect: Effect
) -> tuple[Session, list[Cmd]]:
    try:
        mutation = _mutation(model, msg, effect)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        return model, [_notice(model, msg, say.cannot_commit(exc))]
    changed = _record(model.interaction, msg, ClickStatus.PENDING)
    return model.with_interaction(changed), [Commit(mutation, msg)]


def _mutation(model: Session, msg: ActionClicked, effect: Effect) -> Mutation:
    assert effect.op is not None and effect.key is not None
    decided = model.interaction.decided
    return Mutation(
        id=action_mutation_id(model.id, msg),
        op=effect.op,
        key=effect.key,
        value=effect.value,
        expected_version=decided.get(effect.key, 0) if effect.owned else None,
        actor=msg.actor,
        reason=f"{msg.action} on candidate {msg.target_id} v{msg.expected_version}",
        correlation_id=msg.correlation_id,
        meta={
            "session": model.id,
            "action": msg.action,
            "candidate": msg.target_id,
            "candidateVersion": msg.expected_version,
        },
    )


def action_mutation_id(session_id: str, msg: ActionClicked) -> str:
    """The same for every click on one action of one candidate version in one session."""
    return _mutation_id(session_id, msg.action, msg.target_id, msg.expected_version)


def _mutation_id(session_id: str, action: str, target_id: str, version: int) -> str:
    what = f"{session_id}|{action}|{target_id}|{version}"
    return "act-" + hashlib.blake2s(what.encode(), digest_size=16).hexdigest()


def on_done(settings: LoopSettings, model: Session, msg: ActionDone) -> tuple[Session, list[Cmd]]:
    note, click = msg.result, msg.click
    ok = note.outcome != "rejected"
    # an approval that awaits more keeps the proposal's buttons for the next approver
    counted = click.action in PROPOSAL_ACTIONS and note.outcome == "pending"
    status = ClickStatus.DONE if ok and not counted else ClickStatus.FAILED
    state = _record(model.interaction, click, status)
    if note.waiting is not None:  # a write that waits for approval, or where one stands
        waiting = _add_waiting(state.pending_proposals, note.waiting)
        state = state.model_copy(update={"pending_proposals": waiting})
    resolved = note.outcome in ("committed", "discarded") or note.reason in (
        "not_found",
        "resolved",
        "expired",
        "stale",  # the key moved past the version it was made against
    )
    if click.action in PROPOSAL_ACTIONS and resolved:
        kept = [p for p in state.pending_proposals if p.id != click.target_id]
        state = state.model_copy(update={"pending_proposals": kept})
    if not ok:
        return model.with_interaction(state), [_notice(model, click, say.not_done(note.message))]
    if note.outcome == "discarded" and click.note and note.proposal:
        # the next model call knows what was turned down, and why
        why = " ".join(click.note.split())
        idea = f"{note.proposal} (rejected: {why})"
        idea = idea if len(idea) <= MAX_ITEM_CHARS else idea[: MAX_ITEM_CHARS - 2] + "…)"
        rejected = ContextStateDelta(add_rejected_ideas=[idea])
        model = model.model_copy(update={"working": merge(model.working, rejected)})
    if note.outcome == "committed" and note.key is not None and note.version is not None:
        decided = {**state.decided, note.key: note.version}
        state = state.model_copy(update={"decided": dict(list(decided.items())[-MAX_CLICKS:])})
    if note.outcome == "committed" and note.mutation_id and not note.duplicate:
        undoable = [*state.undoable, note.mutation_id][-MAX_CLICKS:]
        state = state.model_copy(update={"undoable": undoable})
    lesson: list[Cmd] = []
    if click.action == ActionType.CONFIRM_CURRENT and note.outcome == "committed":
        state = state.model_copy(update={"thread_status": ThreadStatus.DECIDED})
        if not note.duplicate:  # "Use this": the turn before it agreed
            state, lesson = _taught(settings, state, Act.COMMIT, click.correlation_id)
        if isinstance(note.value, str) and note.value.strip():
            pinned = ContextStateDelta(pin_decisions=[note.value[:MAX_ITEM_CHARS]])
            model = model.model_copy(update={"working": merge(model.working, pinned)})
    text = say.by_whom(note.message, note.by or str(click.actor))
    undo = _undo(settings, note) if note.outcome == "committed" and not note.duplicate else []
    if click.action == ActionType.REVERT_MUTATION and note.outcome == "committed":
        back = _undecided(model, state, click.target_id)
        if back is not None:  # the candidate Use this decided is on the table again
            model, state, undo = back[0], back[1], []
    reverts = note.reverts_at if note.outcome == "committed" else None
    model, shown = show(
        settings, model, state, click.correlation_id, ViewKind.OUTCOME, text, undo, reverts
    )
    return model, [*shown, *lesson]  # (a lesson last: what is shown is saved first)


def _taught(
    settings: LoopSettings, state: InteractionState, was: Act | None, correlation_id: str
) -> tuple[InteractionState, list[Cmd]]:
    """What a click says of the newest turn, when that turn answered the candidate and left
    it as it was (read as a tangent, a question or agreement, said after the candidate was
    put on the table): it was ``was`` (a commit: "Use this"; None, no commit and no more:
    "Try another angle"). When the loop read it otherwise, a lesson for the workspace's own weights
    (``settings.adapt``); its marks are cleared either way, so one turn teaches once.

    A turn the candidate answers teaches nothing: after "what if we used Postgres" (the
    idea) or "make it Postgres 16" (a refinement), "Use this" takes what the turn asked for,
    and says nothing of how the turn reads."""
    newest = state.recent[-1] if state.recent else None
    if newest is None or not newest.marks:
        return state, []
    answered = state.table_turn is None or state.turn_count <= state.table_turn
    if answered or newest.act not in _LEFT_AS_IT_WAS:
        newest = None  # (its marks cleared below all the same)
    cleared = state.recent[-1].model_copy(update={"marks": ""})
    state = state.model_copy(update={"recent": [*state.recent[:-1], cleared]})
    if newest is None or not settings.adapt or (newest.act is Act.COMMIT) is (was is Act.COMMIT):
        return state, []
    return state, [Teach(newest.marks, was, newest.act, correlation_id)]


def _undecided(
    model: Session, state: InteractionState, reverted: str
) -> tuple[Session, InteractionState] | None:
    """After an Undo of the commit "Use this" made of the candidate on the table: the thread
    open again, the decision unpinned, and the candidate back at its next version (its
    buttons anew: a second "Use this" commits again, under another mutation id)."""
    candidate = state.candidate
    if state.thread_status is not ThreadStatus.DECIDED or candidate is None:
        return None
    used = _mutation_id(model.id, ActionType.CONFIRM_CURRENT, candidate.id, candidate.version)
    if reverted != used:
        return None
    again = candidate.model_copy(update={"version": candidate.version + 1})
    state = state.model_copy(update={"thread_status": ThreadStatus.OPEN, "candidate": again})
    decided = candidate.text[:MAX_ITEM_CHARS].strip()
    pinned = [p for p in model.working.pinned_decisions if p != decided]
    working = model.working.model_copy(update={"pinned_decisions": pinned})
    return model.model_copy(update={"working": working}), state


def _add_waiting(pending: list[ProposalRef], waiting: ProposalRef) -> list[ProposalRef]:
    """``waiting`` among the pending proposals: in place of what the session knew of it (an
    edit changed its value), else last."""
    if any(p.id == waiting.id for p in pending):
        return [waiting if p.id == waiting.id else p for p in pending]
    return [*pending, waiting][-MAX_ITEMS:]


def _undo(settings: LoopSettings, note: OutcomeNote) -> list[Button]:
    """The "Undo" button under what a click committed (the gateway says for how long)."""
    if not settings.undo or note.mutation_id is None or note.version is None:
        return []
    if not re.match(ID_PATTERN, note.mutation_id):  # a click could not name it
        return []
    return [
        Button(
            action=ActionType.REVERT_MUTATION,
            label="Undo",
            style=ActionStyle.DEFAULT,
            beat="undo",
            target_id=note.mutation_id,
            target_version=note.version,
        )
    ]


def _record(state: InteractionState, msg: ActionClicked, status: ClickStatus) -> InteractionState:
    record = ClickRecord(
        click_id=msg.click_id,
        action=msg.action,
        target_id=msg.target_id,
        version=msg.expected_version,
        by=str(msg.actor),
        status=status,
    )
    others = [c for c in state.clicks if c.click_id != msg.click_id]
    return state.model_copy(update={"clicks": [*others, record][-MAX_CLICKS:]})


def _notice(model: Session, msg: ActionClicked, text: str) -> Cmd:
    return notice(model, msg.correlation_id, text)
