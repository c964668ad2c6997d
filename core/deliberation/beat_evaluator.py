"""The evaluator: ``evaluate(state) -> EvaluationResult``. Pure: no I/O, no model, no
canonical state. Every beat whose condition holds contributes, highest priority first; each
surfaced action carries the beat that surfaced it, and the result says which beats fired and
why (and which did not, and why not)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from string import Template
from typing import Any

from pydantic import BaseModel, ConfigDict

from core.cel.library import cel
from core.deliberation.beat_reads import reads_of
from core.deliberation.beats import ActionSpec, ActionStyle, Beat
from core.deliberation.memory import InteractionState, Mode
from core.errors import plainly
from core.state.value_json import dumps

__all__ = ["BeatCheck", "EvaluationResult", "SurfacedAction", "evaluate"]

MAX_ACTIONS = 5  # one row of buttons on Slack and on Discord


class SurfacedAction(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: str
    label: str
    style: ActionStyle
    beat: str


class BeatCheck(BaseModel):
    """One beat's condition, evaluated: ``held``, or why not (``error``)."""

    model_config = ConfigDict(frozen=True)

    beat: str
    priority: int
    when: str
    held: bool
    error: str | None = None


class EvaluationResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    mode: Mode
    actions: list[SurfacedAction]
    nudge: str | None
    fired: list[str]
    checks: list[BeatCheck]


def evaluate(state: InteractionState, beats: Sequence[Beat]) -> EvaluationResult:
    # only what the beats read (``beat_reads``) is dumped and handed to CEL; what the beats
    # make of it is a function of that alone (and of the state's mode, where no beat sets
    # one), so a read seen lately is answered as it was (``_evaluated``): most turns leave
    # what the beats read as it was. A nudge is filled in from the state each time.
    reads = reads_of(tuple(beat.when for beat in beats))
    read = reads.kept(state.model_dump(mode="json", exclude_none=True, include=reads.top))
    key = (tuple(map(id, beats)), dumps(read), state.mode)
    found = _evaluated.get(key)
    if found is None:
        found = (tuple(beats), _evaluation(read, beats, state.mode))
        if len(_evaluated) >= _EVALUATIONS:
            _evaluated.clear()  # (seldom: what the beats read comes back to a few states)
        _evaluated[key] = found
    result, nudging = found[1]
    if nudging is None:
        return result
    return result.model_copy(update={"nudge": nudge_text(nudging, state)})


# the evaluations made lately, by the beats (their ids: the entry holds the beats, so no other
# object has those ids while it is kept), what they read and the state's mode
_EVALUATIONS = 512
_evaluated: dict[tuple[Any, ...], tuple[tuple[Beat, ...], tuple[EvaluationResult, str | None]]]
_evaluated = {}


def _evaluation(
    read: Any, beats: Sequence[Beat], mode: Mode
) -> tuple[EvaluationResult, str | None]:
    """What ``beats`` make of ``read`` (the state as they read it), its nudge left out: the
    template of the nudge to fill in (None: none)."""
    # converted into CEL's values once for every beat (by each ``execute`` it cost a beat
    # ~27 µs, most of the evaluation)
    activation = cel.Context({"state": read})
    checks = [_check(beat, activation) for beat in beats]
    held = sorted(
        (b for b, c in zip(beats, checks, strict=True) if c.held), key=lambda b: -b.priority
    )  # stable: file order breaks ties
    result = EvaluationResult(
        mode=next((b.mode for b in held if b.mode is not None), mode),
        actions=_actions(held),
        nudge=None,
        fired=[b.id for b in held],
        checks=checks,
    )
    return result, next((b.nudge for b in held if b.nudge), None)


def _check(beat: Beat, activation: cel.Context) -> BeatCheck:
    held, error = False, None
    try:
        result = beat.program.execute(activation)
    except Exception as exc:  # cel raises IndexError, ZeroDivisionError, OverflowError too
        # a field the state does not have (yet), an index past the end of a list, a type
        # mismatch: this beat does not fire, and the turn goes on with the others
        error = plainly(exc)
    else:
        if isinstance(result, bool):
            held = result
        else:
            error = f"the condition gave {type(result).__name__}, not a bool"
    return _beat_check(beat.id, beat.priority, beat.when, held, error)


# the checks and actions are frozen: one instance serves every evaluation that comes to the
# same (a beat's check is mostly the same from turn to turn), built and validated once
@lru_cache(maxsize=4096)
def _beat_check(beat: str, priority: int, when: str, held: bool, error: str | None) -> BeatCheck:
    return BeatCheck(beat=beat, priority=priority, when=when, held=held, error=error)


def _actions(held: list[Beat]) -> list[SurfacedAction]:
    surfaced: dict[str, SurfacedAction] = {}
    for beat in held:
        for spec in beat.actions:
            if spec.type not in surfaced and len(surfaced) < MAX_ACTIONS:
                surfaced[spec.type] = _surface(spec, beat)
    return list(surfaced.values())


def _surface(spec: ActionSpec, beat: Beat) -> SurfacedAction:
    return _surfaced(spec.type, spec.label, spec.style, beat.id)


@lru_cache(maxsize=1024)
def _surfaced(type_: str, label: str, style: ActionStyle, beat: str) -> SurfacedAction:
    return SurfacedAction(type=type_, label=label, style=style, beat=beat)


def nudge_text(template: str, state: InteractionState) -> str:
    """A beat's nudge with ``$candidate``, ``$turns``, ``$mode`` and ``$act`` filled in."""
    last = state.last_interpretation
    return Template(template).safe_substitute(
        candidate=state.candidate.text if state.candidate else "",
        turns=str(state.turn_count),
        mode=state.mode.value,
        act=last.act_type.value if last else "",
    )
