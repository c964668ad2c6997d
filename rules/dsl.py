"""The rule DSL: YAML validated into these models when the config loads.

```yaml
- id: switch_scene
  when: {key: scene.name, op: set, to: BRB}     # key glob; op, from and to optional
  if:   {state: {obs.connected: true}, expr: 'state["viewers"] > 100'}   # CEL
  for: 30s                      # the condition must hold this long (survives restarts)
  mode: queued                  # single | queued (default) | parallel | restart, per rule+key
  max: 10                       # runs at once (parallel) or waiting (queued)
  cooldown: 10s                 # no new run for this long after one starts
  then:
    - action: obs.setScene
      args: {name: "{{ state['scene.name'] }}"}    # sandboxed Jinja2
    - mutate: {op: set, key: scene.last_switch, value: "{{ mutation.ts }}"}
```

A ``signal`` rule promotes an ephemeral key: ``signal: {at_least: 3, confidence: 0.8,
within: 10s}`` fires once at least 3 observations with confidence ≥ 0.8 fell within 10 s.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import cached_property
from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationInfo,
    field_validator,
    model_validator,
)

from core.cached_models import Derived
from core.cel.checks import cel_problem, compiled
from core.state.mutation import Op
from rules.templates import check_templates
from rules.variables import NAMES

__all__ = ["Condition", "Mode", "MutateSpec", "Rule", "Signal", "Step", "When", "seconds"]

_GLOB = re.compile(r"^[A-Za-z0-9_.:\-*?\[\]!]{1,200}$")
_ACTION = r"^[a-z][A-Za-z0-9]*\.[a-z][A-Za-z0-9]*$"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
MAX_SECONDS = 30 * 86400


def seconds(value: Any) -> float:
    """A duration: a number of seconds, or text such as ``500ms``, ``30s``, ``5m``, ``1h``."""
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or text like 30s, 5m, 1h")
    if isinstance(value, int | float):
        amount = float(value)
    else:
        match = _DURATION.match(str(value))
        if not match:
            raise ValueError(f"{value!r} is not a duration (a number of seconds, or 30s, 5m, 1h)")
        amount = float(match.group(1)) * _UNIT[match.group(2)]
    if not 0 <= amount <= MAX_SECONDS:
        raise ValueError(f"a duration must be between 0 and {MAX_SECONDS // 86400} days")
    return amount


class Mode(StrEnum):
    SINGLE = "single"  # a run is going: skip the new one
    QUEUED = "queued"  # wait for the runs before it (at most ``max`` waiting)
    PARALLEL = "parallel"  # run beside the others (at most ``max`` at once)
    RESTART = "restart"  # stop the runs going, then run


def _compile_cel(expr: str) -> str:
    problem = cel_problem(expr, NAMES)
    if problem is not None:
        raise ValueError(problem)
    return expr


def _glob(pattern: str) -> str:
    if not _GLOB.match(pattern):
        raise ValueError(f"key pattern {pattern!r} has characters no state key can have")
    return pattern


class When(BaseModel):
    """Which committed mutations trigger the rule. ``from``/``to``: the key's value before
    and after the mutation (absent reads as null)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    key: str
    op: list[Op] = Field(default_factory=list, description="any op when empty")
    from_: JsonValue = Field(default=None, alias="from")
    to: JsonValue = None

    @field_validator("key")
    @classmethod
    def _check_key(cls, pattern: str) -> str:
        return _glob(pattern)

    @field_validator("op", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @property
    def tests_from(self) -> bool:
        return "from_" in self.model_fields_set

    @property
    def tests_to(self) -> bool:
        return "to" in self.model_fields_set


class Condition(Derived):
    """``state``: key → value equalities (absent keys read as null); ``expr``: CEL over
    ``state``, ``mutation`` and ``actor``. Both must hold when both are given."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    state: dict[str, JsonValue] = Field(default_factory=dict)
    expr: str | None = Field(default=None, min_length=1)

    @field_validator("expr")
    @classmethod
    def _check_expr(cls, expr: str | None) -> str | None:
        return expr if expr is None else _compile_cel(expr)

    @cached_property
    def program(self) -> Any:
        return compiled(self.expr) if self.expr else None


class Signal(BaseModel):
    """At least ``at_least`` observations with confidence ≥ ``confidence`` within ``within``
    seconds. An observation's confidence is the value itself when it is a number, else its
    ``confidence_field`` (``{"value": true, "confidence": 0.9}``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    at_least: int = Field(ge=1, le=10_000)
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    within: float = Field(gt=0)
    confidence_field: str = "confidence"

    @field_validator("within", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> float:
        return seconds(value)


class MutateSpec(BaseModel):
    """A derived mutation: committed through the gateway as ``automation``, caused by the
    triggering mutation. ``key`` and ``value`` are templates."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    op: Op
    key: str = Field(min_length=1, max_length=400)
    value: JsonValue = None
    ttl_sec: float | None = Field(default=None, gt=0)

    @field_validator("key", "value")
    @classmethod
    def _templates(cls, value: JsonValue) -> JsonValue:
        return check_templates(value)


class Step(BaseModel):
    """One step of ``then``: ``action`` (a connector action run on a worker, with template
    ``args``) or ``mutate``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    action: str | None = Field(default=None, pattern=_ACTION)
    args: dict[str, JsonValue] = Field(default_factory=dict)
    mutate: MutateSpec | None = None

    @field_validator("action")
    @classmethod
    def _known(cls, name: str | None, info: ValidationInfo) -> str | None:
        known = (info.context or {}).get("actions")
        if name is not None and known is not None and name not in known:
            raise ValueError(f"unknown action {name!r}; known: {', '.join(sorted(known))}")
        return name

    @field_validator("args")
    @classmethod
    def _templates(cls, args: dict[str, JsonValue]) -> dict[str, JsonValue]:
        check_templates(args)
        return args

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        if (self.action is None) == (self.mutate is None):
            raise ValueError("a step has either action: or mutate:, not both or neither")
        if self.mutate is not None and self.args:
            raise ValueError("args: belongs to an action: step")
        return self

    @property
    def label(self) -> str:
        return self.action or f"mutate {self.mutate.key if self.mutate else ''}"


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    id: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
    description: str = ""
    when: When
    if_: Condition | None = Field(default=None, alias="if")
    for_: float | None = Field(default=None, alias="for")
    signal: Signal | None = None
    mode: Mode = Mode.QUEUED  # nothing is dropped unless the rule says so
    max: int = Field(default=10, ge=1, le=1000)
    cooldown: float = 0.0
    then: list[Step] = Field(min_length=1, max_length=20)

    @field_validator("for_", "cooldown", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> float | None:
        return None if value is None else seconds(value)

    @model_validator(mode="after")
    def _one_timing(self) -> Self:
        if self.for_ is not None and self.signal is not None:
            raise ValueError("a rule has either for: or signal:, not both")
        return self
