"""A person's edit of a proposed value, as text: what an edit box shows (``value_text``) and
the value it means (``edited_value``). A proposed string is edited as plain text; any other
value as JSON, so that a number stays a number and an object an object. The key's schema
checks the result when it is applied, like any value."""

from __future__ import annotations

import json

from pydantic import JsonValue

from core.gateway.proposals import Edit
from core.state.value_json import MAX_DEPTH, dumps, nesting

__all__ = ["MAX_EDIT_CHARS", "edited_value", "value_text"]

MAX_EDIT_CHARS = 3000  # what Slack's and Discord's text inputs take (Slack: 3000, Discord: 4000)


def value_text(value: JsonValue) -> str:
    """``value`` as an edit box shows it."""
    return value if isinstance(value, str) else dumps(value)


def edited_value(proposed: JsonValue, text: str) -> Edit:
    """The edit ``text`` makes of ``proposed``; ``ValueError`` naming what is wrong."""
    if len(text) > MAX_EDIT_CHARS:
        raise ValueError(f"the new value is {len(text)} characters, more than {MAX_EDIT_CHARS}")
    if not text.strip():
        raise ValueError("the new value is empty")
    if isinstance(proposed, str):
        return Edit(text.strip())
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"the new value is not JSON ({exc}); write it as JSON") from None
    if nesting(value) > MAX_DEPTH:
        raise ValueError(f"the new value nests more than {MAX_DEPTH} levels deep")
    return Edit(value)


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON value")
