"""A person's edit of a proposed value, as text: what an edit box shows (``value_text``) and
the value it means (``edited_value``). A proposed string is edited as plain text; any other
value as JSON, so that a number stays a number and an object an object. What JSON in UTF-8
cannot carry (a number that is not finite, anywhere in it; a lone surrogate, typed or
escaped) is refused here, as the store would refuse it. The key's schema checks the result
when it is applied, like any value."""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import JsonValue

from core.state.mutation import Op
from core.state.value_json import MAX_DEPTH, dumps, fit, nesting

__all__ = ["MAX_EDIT_CHARS", "Edit", "edited_value", "value_text"]

MAX_EDIT_CHARS = 3000  # what Slack's and Discord's text inputs take (Slack: 3000, Discord: 4000)


@dataclass(frozen=True)
class Edit:
    """A new value for a proposal, given by the person who approves it."""

    value: JsonValue


def value_text(value: JsonValue) -> str:
    """``value`` as an edit box shows it."""
    return value if isinstance(value, str) else dumps(value)


def edited_value(proposed: JsonValue, text: str, op: Op = Op.SET) -> Edit:
    """The edit ``text`` makes of ``proposed`` (the value of an ``op``); ``ValueError``
    naming what is wrong, never quoting ``text`` (the value of a secret key, perhaps)."""
    if op is Op.DELETE:
        raise ValueError("a delete has no value to edit")
    if len(text) > MAX_EDIT_CHARS:
        raise ValueError(f"the new value is {len(text)} characters, more than {MAX_EDIT_CHARS}")
    if not text.strip():
        raise ValueError("the new value is empty")
    if isinstance(proposed, str):
        return Edit(_fit(text.strip()))
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"the new value is not JSON ({exc}); write it as JSON") from None
    if nesting(value) > MAX_DEPTH:
        raise ValueError(f"the new value nests more than {MAX_DEPTH} levels deep")
    if op is Op.INCR and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise ValueError("the new value must be a number (the amount to add)")
    return Edit(_fit(value))


def _fit(value: JsonValue) -> JsonValue:
    """``value``, if JSON in UTF-8 can carry it (never quoted when not: a secret?)."""
    try:
        fit(value)
    except ValueError as exc:
        raise ValueError(f"the new value {exc}") from None
    return value


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON value")
