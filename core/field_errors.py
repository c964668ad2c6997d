"""What pydantic found wrong, in our words: each problem with the field it is in and what was
expected there, never a class name ("a valid dictionary or instance of When") nor the value
found (it may be a secret, or a long text cut where no masking recognises it): only its kind
("got a list"). A mapping expected where a model goes names the fields it takes; a field
not known there, the one it was likely meant to be (or those it takes). A leaf:
the config loader, the rule worker and the command line all say their problems so."""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails

__all__ = ["Loc", "plain_message", "plain_problems", "validation_problems"]

Loc = tuple[str | int, ...]
SHOWN_FIELDS = 5  # a mapping's fields named in "expected a mapping (…)"

_EXPECTED = {
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "dict_type": "a mapping",
    "list_type": "a list",
    "tuple_type": "a list",
    "set_type": "a list",
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
}


def validation_problems(exc: ValidationError, model: type | None = None) -> str:
    """Every problem as ``field: message``, joined; ``model``: the one validated (it names
    the fields a mapping takes)."""
    return "; ".join(
        f"{_dotted(loc) or 'value'}: {message}" for loc, message in plain_problems(exc, model)
    )


def plain_problems(exc: ValidationError, model: type | None = None) -> list[tuple[Loc, str]]:
    """Each problem's field (pydantic's location) and what is wrong there, in plain words."""
    return [
        (tuple(error["loc"]), plain_message(error, model))
        for error in exc.errors(include_url=False)
    ]


def plain_message(error: ErrorDetails, model: type | None = None) -> str:
    kind, loc = error["type"], tuple(error["loc"])
    if kind in _EXPECTED:
        fields = _fields(_model_at(model, loc)) if _EXPECTED[kind] == "a mapping" else ""
        got = _kind_of(error.get("input"))
        if kind == "int_from_float":
            got = "a number with a fraction"
        return f"expected {_EXPECTED[kind]}{fields}, got {got}"
    if kind == "missing":
        return "is required, and missing"
    if kind == "extra_forbidden":
        return f"is not a field here{_instead(model, loc)}"
    if kind in ("enum", "literal_error"):
        expected = (error.get("ctx") or {}).get("expected", "")
        found = error.get("input")
        got = "" if isinstance(found, str) else f", got {_kind_of(found)}"
        return f"expected one of {expected}{got}"
    message = error["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    return message.replace("Input should be", "must be").replace(" after validation", "")


def _instead(model: type | None, loc: Loc) -> str:
    """What a field not known at ``loc`` may have meant: the one spelt closest to it, else
    every field its place takes ("" when they are not known)."""
    parent = _model_at(model, loc[:-1])
    names = [] if parent is None else list(_field_names(parent))
    close = difflib.get_close_matches(str(loc[-1]) if loc else "", names, n=1, cutoff=0.75)
    if close:
        return f" (did you mean {close[0]}:?)"
    return f" (expected one of {', '.join(f'{name}:' for name in names)})" if names else ""


def _dotted(loc: Loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _kind_of(value: Any) -> str:
    """The kind of what was found, never the value itself."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text" if value.strip() else "empty text"
    if isinstance(value, list | tuple | set):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "something else"


def _fields(model: type | None) -> str:
    """`` (key:, op:, from:, to:)``: the first few fields ``model`` takes, as a file writes
    them; "" when it is not known."""
    names = [] if model is None else list(_field_names(model))
    if not names:
        return ""
    shown = names[:SHOWN_FIELDS]
    more = ", …" if len(shown) < len(names) else ""
    return " (" + ", ".join(f"{name}:" for name in shown) + more + ")"


def _field_names(model: type) -> Iterator[str]:
    for name, field in getattr(model, "model_fields", {}).items():
        yield field.alias or name


def _model_at(model: type | None, loc: Loc) -> type | None:
    """The pydantic model that ``loc`` leads to from ``model`` (through lists, mappings
    and optional fields), or None where it leads to no model or cannot be told."""
    current: Any = model
    for part in loc:
        if current is None:
            return None
        here = current if _is_model(current) else _inner(current, None)
        if isinstance(part, int):
            current = _inner(current, list)
        elif here is not None:
            fields = here.model_fields
            found = fields.get(part) or next((f for f in fields.values() if f.alias == part), None)
            current = None if found is None else found.annotation
        else:
            current = _inner(current, dict)
    found_model = current if _is_model(current) else _inner(current, None)
    return found_model if isinstance(found_model, type) else None


def _inner(annotation: Any, container: type | None) -> Any:
    """What ``annotation`` holds: the items of a list (``container`` list), the values of
    a mapping (dict), or (None) the model an optional annotation allows."""
    for option in _options(annotation):
        origin = typing.get_origin(option)
        args = typing.get_args(option)
        if container is list and origin in (list, tuple, set) and args:
            return args[0]
        if container is dict and origin is dict and len(args) == 2:
            return args[1]
        if container is None and _is_model(option):
            return option
    return None


def _options(annotation: Any) -> list[Any]:
    """The types an annotation allows (``X | None``: X and None; ``Annotated[X, …]``: X)."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [a for arg in typing.get_args(annotation) for a in _options(arg)]
    return [annotation]


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and hasattr(annotation, "model_fields")
