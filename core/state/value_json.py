"""The one JSON encoding of stored values: compact, UTF-8, no NaN. commit.lua appends to
stored lists as text, so every list it sees must be in this form. ``loads`` reads JSON text
from outside (a model's tool call) as strictly: Python's json takes NaN, Infinity and
-Infinity, and reads 1e400 as infinity; none of them is JSON. Nor is a lone surrogate text
(``"\\ud800"`` in JSON, or a byte that is not UTF-8 kept as one by Python): it cannot be
written as UTF-8. ``fit`` refuses both in a value made in Python, ``loads`` in JSON text."""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable, Sequence
from json.encoder import encode_basestring
from typing import Any

__all__ = ["MAX_BYTES", "MAX_DEPTH", "dumps", "fit", "loads", "lone_surrogate", "nesting"]

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


_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate in ``text`` (``U+D800``), or None: a Python string holds one
    where JSON escaped half a pair, or where bytes that are not UTF-8 were read with
    ``surrogateescape``; UTF-8 cannot carry it."""
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


def _no_lone_surrogate(text: str) -> None:
    lone = lone_surrogate(text)
    if lone is not None:
        raise ValueError(f"holds {lone}, a lone surrogate: not text")


def fit(value: Any) -> str:
    """``value`` as ``dumps`` writes it, when JSON in UTF-8 can carry it; else
    ``ValueError`` saying why (never quoting the value: it may be a secret's): a number that
    is not finite (NaN, infinity), or a lone surrogate in a string or a name."""
    try:
        text = dumps(value)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
        raise ValueError("holds a number too large for JSON (or NaN, or infinity)") from None
    _no_lone_surrogate(text)
    return text


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
    non-finite number or a lone surrogate (in the text, or escaped in it), ``RecursionError``
    on nesting deeper than the interpreter's stack."""
    _no_lone_surrogate(text)
    value = _DECODER.decode(text)
    if "\\u" in text:  # an escape may be half a pair
        _no_lone_surrogate(dumps(value))
    return value


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
