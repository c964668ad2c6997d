"""The view: what an adapter renders after a message. Text, a nudge, and buttons that carry
only identification (action, target id and version); the same model for Slack, Discord and
the console."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from core.cached_models import Copied
from core.deliberation.actions import (
    ASKS,
    PROPOSAL_ACTIONS,
    ActionType,
    AppAction,
    Asks,
    is_builtin,
)
from core.deliberation.beat_evaluator import EvaluationResult, SurfacedAction
from core.deliberation.beats import ActionStyle
from core.deliberation.memory import Candidate, ClickStatus, InteractionState, Mode

__all__ = ["Button", "View", "ViewKind", "buttons_for"]

MAX_LABEL = 75  # Slack's button text limit (Discord's is 80)


class ViewKind(StrEnum):
    REPLY = "reply"  # the assistant answered a turn
    OUTCOME = "outcome"  # what a click committed (or proposed, or discarded)
    NOTICE = "notice"  # to the clicker only: stale, already done, not allowed


class Button(BaseModel):
    model_config = ConfigDict(frozen=True)

    action: str
    label: str
    style: ActionStyle
    beat: str
    target_id: str
    target_version: int
    confirm: bool = False  # ask before acting (protected keys, destructive actions)
    # what the platform asks the clicker for before it sends the click (a modal): a new
    # value, prefilled with ``prefill`` (EditProposal), or a reason (DiscardProposal)
    asks: Asks | None = None
    prefill: str = ""
    # on a proposal's Apply: the role that may apply it at once with a reason (the platforms
    # offer "Break glass" beside it, which sends this click carrying the reason)
    break_glass: str | None = None


class View(Copied):
    model_config = ConfigDict(frozen=True)

    session_id: str
    correlation_id: str
    kind: ViewKind
    text: str
    buttons: list[Button] = Field(default_factory=list)
    nudge: str | None = None
    mode: Mode = Mode.IDLE
    fired: list[str] = Field(default_factory=list)
    candidate: Candidate | None = None
    decides: str | None = None  # the key "Use this" would write now, shown before a commit
    ephemeral: bool = False  # shown only to the person who clicked
    # deadlines (the Redis server's ms) the adapters show under it: the proposal whose
    # buttons it carries may be applied until ``expires_at``, and once applied reverts by
    # itself ``lasts_sec`` later; the change it says was committed reverts at ``reverts_at``
    expires_at: int | None = None
    lasts_sec: float | None = None
    reverts_at: int | None = None


def buttons_for(
    result: EvaluationResult, state: InteractionState, actions: Mapping[str, AppAction]
) -> list[Button]:
    """Each surfaced action bound to what it acts on. Left out: an action with nothing to act
    on (no candidate, no pending proposal), and one already done on that very version."""
    done = {
        (c.action, c.target_id, c.version) for c in state.clicks if c.status is ClickStatus.DONE
    }
    buttons = []
    for surfaced in result.actions:
        button = _bind(surfaced, state, actions)
        if (
            button is not None
            and (button.action, button.target_id, button.target_version) not in done
        ):
            buttons.append(button)
    return buttons


def _bind(
    surfaced: SurfacedAction, state: InteractionState, actions: Mapping[str, AppAction]
) -> Button | None:
    common = {"action": surfaced.type, "style": surfaced.style, "beat": surfaced.beat}
    if surfaced.type in PROPOSAL_ACTIONS:
        if not state.pending_proposals:
            return None
        proposal = state.pending_proposals[0]
        if surfaced.type == "EditProposal" and not proposal.editable:
            return None  # a delete: no value to edit
        apply = surfaced.type == "ApplyProposal"
        label = f"{surfaced.label}: {proposal.summary}" if apply else surfaced.label
        edit = surfaced.type == "EditProposal"
        return Button(
            **common,
            label=_fit(label),
            target_id=proposal.id,
            target_version=proposal.revision,
            confirm=apply and proposal.protected,
            asks=ASKS.get(surfaced.type),
            prefill=proposal.value if edit else "",
            break_glass=proposal.break_glass if apply else None,
        )
    if surfaced.type == ActionType.RESTORE_CANDIDATE:
        if not state.earlier:
            return None
        previous = state.earlier[-1]
        return Button(
            **common,
            label=_fit(f"{surfaced.label}: {previous.text}"),
            target_id=previous.id,
            target_version=previous.version,
        )
    if state.candidate is None:
        return None
    app = None if is_builtin(surfaced.type) else actions.get(surfaced.type)
    return Button(
        **common,
        label=_fit(surfaced.label),
        target_id=state.candidate.id,
        target_version=state.candidate.version,
        confirm=app is not None and app.confirm,
    )


def _fit(label: str) -> str:
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"
