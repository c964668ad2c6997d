"""The one JSON encoding of stored values: compact, UTF-8, no NaN. commit.lua appends to
stored lists as text, so every list it sees must be in this form. ``loads`` reads JSON text
from outside (a model's tool call) as strictly: Python's json takes NaN, Infinity and
-Infinity, and reads 1e400 as infinity; none of them is JSON."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["dumps", "loads"]


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
