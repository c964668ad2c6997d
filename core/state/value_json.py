"""The one JSON encoding of stored values: compact, UTF-8, no NaN. commit.lua appends to
stored lists as text, so every list it sees must be in this form. ``loads`` reads JSON text
from outside (a model's tool call) as strictly: Python's json takes NaN, Infinity and
-Infinity, and reads 1e400 as infinity; none of them is JSON."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["MAX_BYTES", "MAX_DEPTH", "dumps", "loads", "nesting"]

# how deep a stored value may nest (a list in a dict is 2): every reader (pydantic's JSON
# parser among them, which stops at 200) must be able to read what a writer wrote
MAX_DEPTH = 64
# the most bytes a stored value may take as JSON, whatever the policy says (its
# max_value_bytes may only lower it): every commit is held to it, every reader refuses more
MAX_BYTES = 4 * 1024 * 1024


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def dumps(value: Any) -> str:
    # one encoder for the process: json.dumps with options builds a new one per call
    return _ENCODER.encode(value)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} is too large a number")
    return number


_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite)


def loads(text: str) -> Any:
    """JSON text as a value; ``ValueError`` (``json.JSONDecodeError`` for bad syntax) on a
    non-finite number, ``RecursionError`` on nesting deeper than the interpreter's stack."""
    return _DECODER.decode(text)


_CONTAINERS = (dict, list, tuple)  # a tuple: isinstance takes it faster than a union


def nesting(value: Any, stop: int = MAX_DEPTH + 1) -> int:
    """How deep ``value`` nests (a scalar 0, ``[1]`` 1), counted without recursion and no
    further than ``stop``."""
    if not isinstance(value, _CONTAINERS):
        return 0
    children = value.values() if isinstance(value, dict) else value
    for child in children:
        if isinstance(child, _CONTAINERS):
            break
    else:  # the common case, a flat list or object (or an empty one): one level, no walk
        return 1 if stop > 0 else 0
    deepest = 0
    level: list[Any] = [value]
    while level and deepest < stop:
        inner: list[Any] = []
        for item in level:
            if isinstance(item, dict):
                inner.extend(item.values())
            elif isinstance(item, list | tuple):
                inner.extend(item)
        if not inner and not any(isinstance(i, _CONTAINERS) for i in level):
            break
        deepest += 1
        level = inner
    return deepest
