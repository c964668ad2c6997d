"""A text without its separators (blanks, characters that show nothing, escapes of blanks),
each of its characters knowing where it stood: where a long secret is looked for, whatever
blanks or line breaks were put in it, taken out of it or run together.

It is made with ``str.translate`` and ``str.split`` (and one search for escapes where the
text has a backslash), not with a regular expression per separator: a text of 100,000
characters has some 15,000 blanks, and a match object each would cost more than all the
rest. Where a character stood is worked out only for what was found: every separator is a
space once translated, so a character of the skeleton stood as many characters further as
there are runs between spaces ending before it."""

from __future__ import annotations

import bisect
import itertools
import json
import re

from core.redaction.invisible import DEFAULT_IGNORABLE

__all__ = ["SEPARATOR", "Skeleton", "lowered", "skeleton"]


def _separators() -> list[int]:
    blanks = [code for code in range(0x3000 + 1) if chr(code).isspace()]
    return blanks + [code for first, last in DEFAULT_IGNORABLE for code in range(first, last + 1)]


_BLANKED: dict[int, str] = dict.fromkeys(_separators(), " ")  # each separator as a space


def _blank_escapes() -> list[str]:
    """How JSON (ASCII) and Python's ``repr`` write each blank character."""
    found: set[str] = set()
    for code in range(0x3000 + 1):
        char = chr(code)
        if char.isspace():
            found.update(e for e in (json.dumps(char)[1:-1], repr(char)[1:-1]) if e[:1] == "\\")
    return sorted(found, key=len, reverse=True)


def _either_case(escape: str) -> str:
    """A pattern of ``escape`` whose hex digits may be written in either case (JSON may write
    ``\\u000A``); its letter stays as it is: ``\\F`` is no ``\\f``, nor ``\\N`` a ``\\n``."""
    head, digits = escape[:2], escape[2:]
    if head not in ("\\u", "\\x", "\\U"):
        return re.escape(escape)
    return re.escape(head) + "".join(
        f"[{d.lower()}{d.upper()}]" if d.isalpha() else d for d in digits
    )


# an escape of a blank
ESCAPES = re.compile("|".join(_either_case(e) for e in _blank_escapes()))
# a run of separators: blanks, characters that show nothing, escapes of blanks
_IGNORABLE = "".join(
    chr(first) if first == last else f"{chr(first)}-{chr(last)}"
    for first, last in DEFAULT_IGNORABLE
)
SEPARATOR = re.compile(rf"(?:[\s{_IGNORABLE}]|{ESCAPES.pattern})+")


def skeleton(text: str) -> str:
    """``text`` without its separators."""
    return Skeleton(text).text


def lowered(text: str) -> str:
    """``text`` in lower case, one character for one (``İ`` lowers to two: kept as it is)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


class Skeleton:
    """``text`` without its separators (``self.text``), and where each of its characters
    stood in ``text`` (``span``); ``escapes`` False: its backslashes as they are (a value
    that ends in one may stand before a letter that reads as a blank's escape with it)."""

    def __init__(self, text: str, escapes: bool = True) -> None:
        if escapes and "\\" in text:  # escapes of blanks, as blanks of as many characters
            text = ESCAPES.sub(lambda m: " " * len(m.group()), text)
        self._blanked = text.translate(_BLANKED)  # each separator a space
        self.text = self._blanked.replace(" ", "")
        self._ends: list[int] | None = None

    def source(self, position: int) -> int:
        """Where the character at ``position`` of the skeleton stood in the text: past as
        many separator characters as runs between them end at or before it."""
        if self._ends is None:  # (worked out for the first match only)
            runs = self._blanked.split(" ")
            self._ends = list(itertools.accumulate(map(len, runs)))
        return position + bisect.bisect_right(self._ends, position)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Where the skeleton's ``[start, end)`` stood in the text: from its first character
        to its last, the separators between them included."""
        return self.source(start), self.source(end - 1) + 1
