"""The one JSON encoding of stored values: compact, UTF-8, no NaN. commit.lua appends to
stored lists as text, so every list it sees must be in this form. ``loads`` reads JSON text
from outside (a model's tool call) as strictly: Python's json takes NaN, Infinity and
-Infinity, and reads 1e400 as infinity; none of them is JSON."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Sequence
from json.encoder import encode_basestring
from typing import Any

__all__ = ["MAX_BYTES", "MAX_DEPTH", "dumps", "loads", "nesting"]

# how deep a stored value may nest (a list in a dict is 2): every reader (pydantic's JSON
# parser among them, which stops at 200) must be able to read what a writer wrote
MAX_DEPTH = 64
# the most bytes a stored value may take as JSON, whatever the policy says (its
# max_value_bytes may only lower it): every commit is held to it, every reader refuses more
MAX_BYTES = 4 * 1024 * 1024


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class _Encoders(threading.local):
    """``_ENCODER.encode`` builds its C encoder (``json.encoder.c_make_encoder``) anew on
    every call, and that is three quarters of its time for a small value (4.6 µs against
    1.1 µs, a commit encodes two): each thread keeps one here, built as ``encode`` builds
    it, with its own ``markers`` (the ids of the containers being encoded, for the circular
    check), emptied after an error, which leaves them behind."""

    def __init__(self) -> None:
        self.markers: dict[int, Any] = {}
        self.encode: Callable[[Any, int], Sequence[str]] | None = None
        if _C_ENCODER is not None:  # None: a Python built without _json
            self.encode = _C_ENCODER(
                self.markers, _ENCODER.default, encode_basestring, None, ":", ",", *_FLAGS
            )


_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_FLAGS = (False, False, False)  # sort_keys, skipkeys, allow_nan: as _ENCODER has them
_encoders = _Encoders()


def dumps(value: Any) -> str:
    """``value`` as compact JSON, exactly as ``_ENCODER.encode`` writes it."""
    encoders = _encoders
    if encoders.encode is None:
        return _ENCODER.encode(value)
    try:
        return "".join(encoders.encode(value, 0))
    except BaseException:
        encoders.markers.clear()
        raise


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
