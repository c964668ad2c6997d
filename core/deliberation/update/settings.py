"""What the loop is configured with: the beat library, the app's actions, the keys built-in
actions write, the confidence below which a turn is routed as a question, and the budget of
state a model call may see. ``CoreConfig.loop_settings()`` builds it from the config file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from core.deliberation.actions import AppAction, KeyTemplates
from core.deliberation.beats import Beat
from core.deliberation.turn import DEFAULT_CONTEXT_BUDGET

__all__ = ["LoopSettings"]


@dataclass(frozen=True)
class LoopSettings:
    beats: tuple[Beat, ...] = ()
    actions: Mapping[str, AppAction] = field(default_factory=dict)
    keys: KeyTemplates = field(default_factory=KeyTemplates)
    min_confidence: float = 0.0  # as core/config/default.yaml: calibrated
    context_budget: int = DEFAULT_CONTEXT_BUDGET
    adapt: bool = True  # clicks teach the workspace's own weights (perception.adapt)
    undo: bool = True  # an "Undo" button under what a click committed (policy.undo)
