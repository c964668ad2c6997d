"""Whether a rule's trigger and condition hold for one committed mutation: pure, shared by
the engine and ``rules test``. Every answer says why, in words a person can act on."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from core.compact import dumps
from core.log import LogRecord
from core.mutation import Op
from core.store import StateStore
from rules.dsl import Condition, Rule, When
from rules.templates import TemplateFailed, render

__all__ = [
    "Check",
    "StateView",
    "after_value",
    "check_rule",
    "live_values",
    "plan_steps",
    "variables",
]


class StateView(Mapping[str, JsonValue]):
    """Canonical state as rules read it: values by key, absent keys read as null, loaded on
    first use (most mutations match no rule and never pay for the read)."""

    def __init__(self, load: Callable[[], Mapping[str, JsonValue]]) -> None:
        self._load = load
        self._values: Mapping[str, JsonValue] | None = None

    @classmethod
    def of(cls, values: Mapping[str, JsonValue]) -> StateView:
        return cls(lambda: values)

    @classmethod
    def of_store(cls, store: StateStore) -> StateView:
        """The store's live values, read on first use."""
        return cls(lambda: live_values(store))

    @property
    def loaded(self) -> Mapping[str, JsonValue]:
        if self._values is None:
            self._values = self._load()
        return self._values

    def __getitem__(self, key: str) -> JsonValue:
        return self.loaded.get(key)

    def __iter__(self) -> Any:
        return iter(self.loaded)

    def __len__(self) -> int:
        return len(self.loaded)

    def __contains__(self, key: object) -> bool:
        return key in self.loaded


def live_values(store: StateStore) -> dict[str, JsonValue]:
    return {entry.key: entry.value for entry in store.entries()}


def same(a: JsonValue, b: JsonValue) -> bool:
    """JSON equality: ``1`` and ``true`` differ, ``1`` and ``1.0`` do not."""
    return bool(json.loads(dumps(a)) == json.loads(dumps(b))) and _kinds(a) == _kinds(b)


def _kinds(value: JsonValue) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def after_value(record: LogRecord) -> JsonValue:
    """The key's value once the mutation applied (null after a delete)."""
    m, prev = record.mutation, record.prev
    if m.op is Op.SET:
        return m.value
    if m.op is Op.DELETE:
        return None
    if m.op is Op.INCR:
        assert isinstance(m.value, int | float)
        return (prev if isinstance(prev, int | float) else 0) + m.value
    return [*(prev if isinstance(prev, list) else []), m.value]


@dataclass
class Check:
    """``held``: the trigger and the condition both hold; otherwise ``why`` says which part
    did not (or what failed)."""

    held: bool
    why: str
    details: list[str] = field(default_factory=list)


def variables(record: LogRecord, state: Mapping[str, JsonValue]) -> dict[str, Any]:
    """What templates and CEL see: ``state``, ``mutation`` (with ``prev`` and ``after``) and
    ``actor``."""
    mutation = record.mutation.model_dump(mode="json", by_alias=True, exclude_none=True)
    mutation.update(
        value=record.mutation.value,
        prev=record.prev,
        after=after_value(record),
        version=record.version,
        logId=record.log_id,
        ts=record.ts,
    )
    return {"state": state, "mutation": mutation, "actor": mutation["actor"]}


def check_trigger(when: When, record: LogRecord) -> str | None:
    """None when the mutation triggers; else why not."""
    m = record.mutation
    if when.op and m.op not in when.op:
        return f"op {m.op.value} is not {'/'.join(op.value for op in when.op)}"
    if when.tests_from and not same(record.prev, when.from_):
        return f"from: was {dumps(record.prev)}, not {dumps(when.from_)}"
    if when.tests_to and not same(after_value(record), when.to):
        return f"to: is {dumps(after_value(record))}, not {dumps(when.to)}"
    return None


def check_condition(condition: Condition | None, names: Mapping[str, Any]) -> str | None:
    if condition is None:
        return None
    state = names["state"]
    for key, wanted in condition.state.items():
        if not same(state[key], wanted):
            return f"if.state: {key} is {dumps(state[key])}, not {dumps(wanted)}"
    if condition.program is None:
        return None
    activation = dict(names, state=dict(state.items()))
    try:
        result = condition.program.execute(activation)
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        return f"if.expr failed: {type(exc).__name__}: {exc}"
    if result is not True:
        return f"if.expr is {dumps(result) if isinstance(result, bool) else repr(result)}"
    return None


def check_rule(rule: Rule, record: LogRecord, state: Mapping[str, JsonValue]) -> Check:
    why = check_trigger(rule.when, record)
    if why is not None:
        return Check(False, why)
    why = check_condition(rule.if_, variables(record, state))
    if why is not None:
        return Check(False, why)
    return Check(True, "the trigger and the condition hold")


def plan_steps(
    rule: Rule, record: LogRecord, state: Mapping[str, JsonValue]
) -> list[dict[str, Any]]:
    """What the steps would do, rendered now: actions with their arguments, derived
    mutations with their key and value. A template that fails is reported in its step."""
    names = variables(record, state)
    planned: list[dict[str, Any]] = []
    for index, step in enumerate(rule.then):
        entry: dict[str, Any] = {"step": index}
        try:
            if step.action is not None:
                entry.update(action=step.action, args=render(step.args, names))
            elif step.mutate is not None:
                spec = step.mutate
                entry.update(
                    mutate={
                        "op": spec.op.value,
                        "key": render(spec.key, names),
                        "value": render(spec.value, names),
                    }
                )
        except TemplateFailed as exc:
            entry.update(action=step.action, error=f"template failed: {exc}")
        planned.append(entry)
    return planned
