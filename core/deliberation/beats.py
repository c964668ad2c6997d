"""The beat library: named beats with a CEL precondition over interaction state, a priority,
and an effect (actions to surface, a nudge, a mode). Loaded from the config file; a condition
that does not compile fails the load with its file, line and field."""

from __future__ import annotations

from enum import StrEnum
from functools import cached_property
from string import Template
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from core.cached_models import Derived
from core.cel.checks import cel_problem, compiled
from core.deliberation.actions import ACTION_NAME
from core.deliberation.memory import InteractionState, Mode

__all__ = ["ActionSpec", "ActionStyle", "Beat"]


class ActionStyle(StrEnum):
    DEFAULT = "default"
    PRIMARY = "primary"
    DANGER = "danger"


class ActionSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str = Field(pattern=ACTION_NAME)  # built in, or defined under `actions:`
    label: str = Field(min_length=1, max_length=75)  # Slack's button text limit
    style: ActionStyle = ActionStyle.DEFAULT


class Beat(Derived):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
    when: str = Field(min_length=1, description="CEL over `state` (the interaction state)")
    priority: int = Field(default=0, ge=-1000, le=1000)
    actions: list[ActionSpec] = Field(default_factory=list, max_length=5)
    nudge: str | None = Field(default=None, max_length=500)
    mode: Mode | None = None

    @field_validator("when")
    @classmethod
    def _compiles(cls, when: str) -> str:
        problem = cel_problem(when, STATE_NAMES)
        if problem is not None:
            raise ValueError(problem)
        return when

    @model_validator(mode="after")
    def _nudge_fields_known(self) -> Self:
        if self.nudge is not None:
            unknown = set(_template_names(self.nudge)) - NUDGE_FIELDS
            if unknown:
                raise ValueError(
                    f"nudge uses unknown fields {sorted(unknown)}; known: {sorted(NUDGE_FIELDS)}"
                )
        return self

    @cached_property
    def program(self) -> Any:
        return compiled(self.when)


# what a beat's condition reads: the interaction state, by its fields' names
STATE_NAMES = {"state": frozenset(InteractionState.model_fields)}
NUDGE_FIELDS = frozenset({"candidate", "turns", "mode", "act"})


def _template_names(text: str) -> list[str]:
    return [
        m.group("named") or m.group("braced")
        for m in Template.pattern.finditer(text)
        if m.group("named") or m.group("braced")
    ]
