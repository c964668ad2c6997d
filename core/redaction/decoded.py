"""A text with its escapes read, each character knowing where it stood: where a secret is
looked for again when whatever carried it wrote some of its characters as escapes.

A service's answer may quote what it got in escapes ``forms`` does not spell out: JSON that
escapes more than Python's does (Go writes ``<``, ``>`` and ``&`` as ``\\u003c``, PHP writes
``/`` as ``\\/``, some write every character as ``\\uXXXX``), ``\\xXX`` escapes, a query
string with every byte percent-encoded, or ``/`` left as it is, HTML or XML with numeric or
named character references (``&#115;``, ``&#x73;``, ``&apos;``), or one of these inside
another (an HTML page quoting a JSON body). So the text is read once more with each escape
replaced by what it stands for (``DEPTH`` times at most, for an escape inside another), and
a match there covers, in the text, every escape it was read from. Text with no ``\\``,
``%`` or ``&`` has nothing to read, and is not looked at again."""

from __future__ import annotations

import bisect
import codecs
import html
import re
import sys
from collections.abc import Iterator
from functools import lru_cache

__all__ = ["DEPTH", "Decoded", "Reading", "escaped", "readings"]

DEPTH = 2  # an escape inside another: read twice

_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"  # a surrogate pair
    r"|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|\\x[0-9a-fA-F]{2}"
    r"|\\[\\/\"'`bfnrtv]"
    r"|(?:%[0-9a-fA-F]{2})+"  # (a run: the bytes of one character may take several)
    r"|&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
)
_BACKSLASHED = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def escaped(text: str) -> bool:
    """Whether ``text`` may hold an escape (most text holds none: a quick look)."""
    return "\\" in text or "%" in text or "&" in text


@lru_cache(maxsize=4096)
def _read(escape: str) -> str:
    """What ``escape`` stands for."""
    if escape[0] == "%":
        return bytes.fromhex(escape.replace("%", "")).decode("utf-8", "replace")
    if escape[0] == "&":
        return html.unescape(escape)
    if escape[1] in "uUx":
        codes = [int(part, 16) for part in escape[2:].split("\\u")]
        made = "".join(chr(code) if code <= sys.maxunicode else "\ufffd" for code in codes)
        return made.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return _BACKSLASHED.get(escape[1], escape[1])


def _stood(escape: str) -> list[tuple[int, int]]:
    """Where each character ``escape`` stands for stood in it: the bytes of each character
    of a percent-encoded run; all of it for any other escape."""
    if escape[0] != "%":
        return [(0, len(escape))] * len(_read(escape))
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    found: list[tuple[int, int]] = []
    first = 0
    for at in range(0, len(escape), 3):
        made = decoder.decode(bytes.fromhex(escape[at + 1 : at + 3]))
        found += [(first, at + 3)] * len(made)
        first = at + 3 if made else first
    return found + [(first, len(escape))] * len(decoder.decode(b"", final=True))


class Decoded:
    """``text`` with its escapes read (``self.text``), and where each of its characters
    stood in ``text`` (``span``). What is kept of each escape is where it stood and where
    what it stands for starts in the read text: where each character of it stood is worked
    out only for a match."""

    def __init__(self, text: str) -> None:
        self._source = text
        found: list[tuple[int, int, int]] = []  # each escape's start, end, reading's length

        def read(escape: re.Match[str]) -> str:
            made = _read(escape.group())
            found.append((escape.start(), escape.end(), len(made)))
            return made

        self.text = _ESCAPE.sub(read, text)
        self._found = found
        self._starts: list[int] | None = None  # where each escape's reading starts
        self._within: dict[int, list[tuple[int, int]]] = {}  # (each escape's, once)

    def _stood(self, position: int) -> tuple[int, int]:
        """Where the read text's character at ``position`` stood in the text."""
        if self._starts is None:  # (worked out for the first match only)
            grown, self._starts = 0, []
            for start, end, length in self._found:
                self._starts.append(start + grown)
                grown += length - (end - start)
        at = bisect.bisect_right(self._starts, position) - 1
        if at < 0:
            return position, position + 1
        start, end, length = self._found[at]
        into = position - self._starts[at]
        if into < length:  # read from this escape
            if at not in self._within:
                self._within[at] = _stood(self._source[start:end])
            first, last = self._within[at][into]
            return start + first, start + last
        offset = end + into - length  # as it was, after it
        return offset, offset + 1

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Where the read text's ``[start, end)`` stood in the text: every escape it was read
        from whole."""
        return self._stood(start)[0], self._stood(end - 1)[1]


class Reading:
    """A text read through one ``Decoded`` or more in turn (an escape inside another)."""

    def __init__(self, steps: tuple[Decoded, ...]) -> None:
        self.steps = steps
        self.text = steps[-1].text

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Where ``[start, end)`` of the reading stood in the text first read."""
        for step in reversed(self.steps):
            start, end = step.span(start, end)
        return start, end


def readings(text: str) -> Iterator[Reading]:
    """``text`` read once, then again (``DEPTH`` times at most), while it holds escapes
    that read as something else."""
    steps: tuple[Decoded, ...] = ()
    current = text
    for _ in range(DEPTH):
        if not escaped(current):
            return
        step = Decoded(current)
        if step.text == current:
            return
        steps += (step,)
        yield Reading(steps)
        current = step.text
