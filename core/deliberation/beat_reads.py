"""What of the interaction state the beats' conditions read, so that only that is handed to
CEL. Converting the state into CEL's values is most of an evaluation, and it costs by the
string: the ``earlier`` candidates alone took ~80 µs a turn, the whole state ~160 µs, while
the shipped beats read six fields, two of them only for their size.

Each condition is read for its paths from ``state``: ``state.a.b`` reads ``b`` of ``a``;
``has(state.a)`` reads only that ``a`` is there; ``size(state.a)`` and ``state.a.size()``
only how many items ``a`` holds; any other use (a comparison, ``in``, an index, a macro
such as ``exists``) reads the whole value. The state handed over keeps what is read and
stands ``None`` in for what is only counted or looked for, so every condition comes out as
it does on the whole state, its errors too. A condition that names ``state`` any other way
(``state[...]``, ``state.?a``, a macro variable called ``state``, the word in a string) is not
read for paths: then the whole state is handed over."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = ["Reads", "reads_of"]

_STATE = re.compile(r"(?<![\w.])state\b")
_PATH = re.compile(r"(?<![\w.])state((?:\.[A-Za-z_]\w*)+)")
_CALL = re.compile(r"\s*\(")
_CLOSE = re.compile(r"\s*\)")
_OPENED_BY = re.compile(r"(?<![\w.])(has|size)\s*\(\s*$")


@dataclass
class Reads:
    """What is read of one value: all of it, its size, that it is there (no flag), and
    what of its fields (``fields``)."""

    whole: bool = False
    size: bool = False
    fields: dict[str, Reads] = field(default_factory=dict)

    def at(self, path: Sequence[str]) -> Reads:
        node = self
        for name in path:
            node = node.fields.setdefault(name, Reads())
        return node

    @property
    def top(self) -> set[str] | None:
        """The fields of the value that ``kept`` looks at (None: all of them): what a
        dump of it for ``kept`` needs."""
        return None if self.whole or self.size else set(self.fields)

    def kept(self, value: Any) -> Any:
        """``value`` with what is not read left out (or stood in for by ``None``)."""
        if self.whole:
            return value
        if isinstance(value, dict):
            if self.size:  # every key counts; the values only as far as they are read
                fields = self.fields
                return {k: fields[k].kept(v) if k in fields else None for k, v in value.items()}
            return {k: node.kept(value[k]) for k, node in self.fields.items() if k in value}
        if isinstance(value, list) and self.size and not self.fields:
            return [None] * len(value)
        if self.size or self.fields:  # a string's size, a field of a list or a scalar (an error)
            return value
        return None  # only looked for (``has``): any value says it is there


@lru_cache(maxsize=64)
def reads_of(conditions: tuple[str, ...]) -> Reads:
    """What ``conditions`` read of ``state`` (``whole`` when one names it otherwise than by
    a path)."""
    root = Reads()
    for source in conditions:
        if not _read(source, root):
            return Reads(whole=True)
    return root


def _read(source: str, root: Reads) -> bool:
    paths = list(_PATH.finditer(source))
    if len(paths) != len(_STATE.findall(source)):
        return False  # ``state`` named other than as ``state.a...``
    for found in paths:
        path = found.group(1)[1:].split(".")
        after = source[found.end() :]
        call = _CALL.match(after)
        if call is not None:  # a method: ``state.a.size()``, ``state.a.exists(...)``
            method, path = path[-1], path[:-1]
            if not path:
                return False  # ``state.size()``: the whole state
            if method == "size" and _CLOSE.match(after, call.end()):
                root.at(path).size = True
            else:
                root.at(path).whole = True
            continue
        opened = _OPENED_BY.search(source, 0, found.start())
        if opened is not None and _CLOSE.match(after):
            node = root.at(path)
            if opened.group(1) == "size":
                node.size = True
            # (``has``: only that it is there, which ``at`` records)
            continue
        root.at(path).whole = True
    return True
