"""Whether a rule's trigger and condition hold for one committed mutation: pure, shared by
the engine and ``rules test``. Every answer says why, in words a person can act on."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import JsonValue

from core.cel.library import cel
from core.gateway.secrecy import masked
from core.state.mutation_log import LogRecord
from core.state.value_json import dumps
from rules.dsl import Condition, Rule, When
from rules.templates import TemplateFailed, render
from rules.variables import after_value, masked_variables, same, variables, was

__all__ = [
    "Activation",
    "Check",
    "check_condition",
    "check_rule",
    "check_trigger",
    "plan_steps",
    "shown",
]


@dataclass
class Check:
    """``held``: the trigger and the condition both hold; otherwise ``why`` says which part
    did not (or what failed)."""

    held: bool
    why: str
    details: list[str] = field(default_factory=list)
    failed: bool = False  # the condition could not be evaluated (an error, not a bool)


class Activation:
    """What the rules one record triggers are checked over, made once for all of them: the
    variables (``variables``) and the CEL context their expressions run in. The context is
    made at the first expression (a record whose rules have none never reads the state),
    and the state is converted to CEL's values once for the record, not once per rule: a
    rule's expression over 2,000 keys cost 3.6 ms that way."""

    def __init__(self, record: LogRecord, state: Mapping[str, JsonValue]) -> None:
        self.record, self.state = record, state

    @cached_property
    def names(self) -> dict[str, Any]:
        return variables(self.record, self.state)

    @cached_property
    def context(self) -> cel.Context:
        context = cel.Context()
        context.update(dict(self.names, state=dict(self.state.items())))
        return context


Secrets = Callable[[str], bool]


def _nothing_secret(key: str) -> bool:
    return False


def _as_is(text: str) -> str:
    return text


def shown(key: str, value: JsonValue, is_secret: Secrets) -> str:
    """``value`` of ``key`` as a reason quotes it: a secret key's as ``(secret)``. Masked by
    key, never by value: text a member wrote into another key is quoted as written, so a
    reason cannot tell anyone that their guess matched a secret."""
    return dumps(masked(value) if is_secret(key) else value)


def check_trigger(
    when: When, record: LogRecord, is_secret: Secrets = _nothing_secret
) -> str | None:
    """None when the mutation triggers; else why not."""
    m = record.mutation
    if when.op and m.op not in when.op:
        return f"op {m.op.value} is not {'/'.join(op.value for op in when.op)}"
    if when.tests_from and not was(record, when.from_):
        kept = shown(m.key, record.prev, is_secret)
        before = kept if record.prev_kept else f"{record.prev_bytes} bytes"
        return f"from: was {before}, not {dumps(when.from_)}"
    if when.tests_to and not same(after_value(record), when.to):
        return f"to: is {shown(m.key, after_value(record), is_secret)}, not {dumps(when.to)}"
    return None


def check_condition(
    condition: Condition | None,
    activation: Activation,
    is_secret: Secrets = _nothing_secret,
    mask: Callable[[str], str] = _as_is,
) -> str | None:
    """None when ``condition`` holds over ``activation``; else why not. A value is quoted
    only where its key is known (``shown``); an expression's result is named by its type,
    and ``mask`` strikes secrets out of an expression's error (it may quote anything)."""
    why, _ = _condition(condition, activation, is_secret, mask)
    return why


def _condition(
    condition: Condition | None,
    activation: Activation,
    is_secret: Secrets,
    mask: Callable[[str], str],
) -> tuple[str | None, bool]:
    """``check_condition``'s answer, and whether the expression failed (an error, or a
    result that is no bool) rather than being false."""
    if condition is None:
        return None, False
    state = activation.state
    for key, wanted in condition.state.items():
        if not same(state[key], wanted):
            return (
                f"if.state: {key} is {shown(key, state[key], is_secret)}, not {dumps(wanted)}",
                False,
            )
    if condition.program is None:
        return None, False
    # made outside the try: reading the state (a ``StateView`` asks the store) may fail, and
    # that error is the store's, raised as it is (the record is handled again), never taken
    # for the expression's failing (the rule recorded as not fired); CEL's conversion of the
    # JSON values it holds does not fail
    context = activation.context
    try:
        result = condition.program.execute(context)
    except Exception as exc:  # any error of an author's expression: it did not hold
        return failure(exc, condition.expr or "", mask), True
    if result is False:
        return "if.expr is false", False
    if result is not True:  # the result may be derived from a secret: its type, not itself
        return f"if.expr is {_kind(result)}, not true or false", True
    return None, False


def failure(exc: Exception, expr: str, mask: Callable[[str], str] = _as_is) -> str:
    """Why ``expr`` could not be evaluated, in plain words (no exception's class name): a
    key it reads that is not set (CEL's KeyError names it), else CEL's own message; what
    follows the field passed through ``mask`` (it may quote anything)."""
    if isinstance(exc, KeyError) and exc.args:
        name = str(exc.args[0])
        quoted = re.escape(name)
        if re.search(rf"""state\s*(\[\s*(["']){quoted}\2\s*\]|\.\s*{quoted}\b)""", expr):
            said = (
                f"the key {name} is not set; check it first with "
                f'"{name}" in state, or give it a default'
            )
        else:
            said = f"{name} is not there; check it first, with has() or in"
        return f"if.expr: {mask(said)}"
    return f"if.expr could not be evaluated: {mask(str(exc).strip() or 'no reason given')}"


def _kind(result: Any) -> str:
    if result is None:
        return "null"
    names = {str: "a string", int: "a number", float: "a number", list: "a list", dict: "a map"}
    for kind, name in names.items():
        if isinstance(result, kind):
            return name
    return f"a {type(result).__name__}"


def check_rule(
    rule: Rule,
    record: LogRecord,
    state: Mapping[str, JsonValue],
    is_secret: Secrets = _nothing_secret,
    mask: Callable[[str], str] = _as_is,
    activation: Activation | None = None,
) -> Check:
    """Whether ``rule`` fires for ``record`` over ``state``, and why not: a reason quotes no
    secret key's value (``is_secret``: the policy's; ``mask`` for an expression's error).
    ``activation``: the record's, shared by the rules it triggers (else one of its own)."""
    why = check_trigger(rule.when, record, is_secret)
    if why is not None:
        return Check(False, why)
    activation = activation or Activation(record, state)
    why, failed = _condition(rule.if_, activation, is_secret, mask)
    if why is not None:
        return Check(False, why, failed=failed)
    return Check(True, "the trigger and the condition hold")


def plan_steps(
    rule: Rule,
    record: LogRecord,
    state: Mapping[str, JsonValue],
    is_secret: Callable[[str], bool],
) -> list[dict[str, Any]]:
    """What the steps would do, rendered now: actions with their arguments, derived
    mutations with their key and value; a secret key's values rendered as ``(secret)``
    (``is_secret``: the policy's), for this is written down and shown. A template that
    fails is reported in its step."""
    names = masked_variables(record, state, is_secret)
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
