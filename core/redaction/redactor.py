"""``Redactor``: known secret values struck out of text and JSON data, in every shape
``core.redaction.forms`` knows, by the one function every writer calls before it cuts,
joins or normalises anything (``text``; ``kept`` for a person's words).

How a text is searched: values shorter than ``LONG`` are matched in the text as it is (a
run of separators where the value has blanks; one shorter than ``MIN_INSIDE`` only as a
word of its own). Longer ones are matched in the text's *skeleton* (the text with every
separator taken out, each of its characters knowing where it stood), case-insensitively,
with their base64 forms: a match there covers the text from its first character to its
last, whatever separators stood between. Each match is replaced by its value's label
(``(secret)`` unless said otherwise); labels already in the text are left alone, so that
striking out twice changes nothing the first time did not."""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from core.redaction.forms import LONG, MIN_INSIDE, SEPARATOR, Kind, forms, skeleton
from core.redaction.invisible import visible

__all__ = ["LONG", "MIN_INSIDE", "SECRET", "Redactor"]

SECRET = "(secret)"  # a secret value, wherever anything but where it is kept would show it

Span = tuple[int, int, str]  # start, end (in the text), the label that replaces it


class _Matcher:
    """One compiled search: each alternative in its own group, whose number names its label."""

    def __init__(self, pattern: str, labels: tuple[str, ...]) -> None:
        self.pattern = re.compile(pattern) if pattern else None
        self.labels = labels

    def spans(self, text: str) -> list[Span]:
        if self.pattern is None:
            return []
        return [
            (m.start(), m.end(), self.labels[(m.lastindex or 1) - 1])
            for m in self.pattern.finditer(text)
        ]


def _short_pattern(form: str) -> str:
    parts = [p for p in SEPARATOR.split(form) if p]
    pattern = SEPARATOR.pattern.join(re.escape(p) for p in parts)
    if len("".join(parts)) < MIN_INSIDE:
        return rf"(?<!\w){pattern}(?!\w)"
    return pattern


@lru_cache(maxsize=256)
def _matchers(branches: tuple[tuple[str, Kind, str], ...]) -> tuple[_Matcher, _Matcher]:
    """The search of the text as it is (short forms) and of its skeleton (long ones), for
    ``branches`` (form, kind, label), the longest first."""
    short: list[tuple[int, str, str]] = []
    long: list[tuple[int, str, str]] = []
    for form, kind, label in branches:
        bare = skeleton(form)
        if kind is Kind.SHORT:
            short.append((len(bare), _short_pattern(form), label))
        elif kind is Kind.LONG:
            long.append((len(bare), f"(?i:{re.escape(bare)})", label))
        else:
            long.append((len(bare), re.escape(bare), label))
    made = []
    for found in (short, long):
        found.sort(key=lambda b: (-b[0], b[1]))
        pattern = "|".join(f"({p})" for _, p, _ in found)
        made.append(_Matcher(pattern, tuple(label for _, _, label in found)))
    return made[0], made[1]


class _Skeleton:
    """``text`` without its separators, and where each of its characters stood in ``text``."""

    def __init__(self, text: str) -> None:
        pieces: list[str] = []
        self._at: list[int] = []  # skeleton positions where separators were taken out
        self._shift: list[int] = []  # how many characters were taken out up to there
        kept = taken = 0
        for m in SEPARATOR.finditer(text):
            pieces.append(text[kept : m.start()])
            self._at.append(m.start() - taken)
            taken += m.end() - m.start()
            self._shift.append(taken)
            kept = m.end()
        pieces.append(text[kept:])
        self.text = "".join(pieces)

    def source(self, position: int) -> int:
        at = bisect.bisect_right(self._at, position) - 1
        return position + (self._shift[at] if at >= 0 else 0)

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.source(start), self.source(end - 1) + 1


class Redactor:
    """Known secret values, each with the label that replaces it (``SECRET`` unless said
    otherwise: an environment value as ``${NAME}``, a connector's credential as ``***``)."""

    def __init__(self, values: Iterable[Any] = (), *, mask: str = SECRET) -> None:
        self._entries: tuple[tuple[Any, str], ...] = tuple(
            (v, mask) for v in values if v is not None
        )
        self._build()

    @classmethod
    def labelled(cls, entries: Iterable[tuple[Any, str]]) -> Redactor:
        """Each value struck out as its own label."""
        made = cls()
        made._entries = tuple((v, label) for v, label in entries if v is not None)
        made._build()
        return made

    def _build(self) -> None:
        labels = {label for _, label in self._entries}
        branches: set[tuple[str, Kind, str]] = set()
        self._plain: dict[str, str] = {}
        for value, label in self._entries:
            for form, kind in forms(value):
                if skeleton(form) and form not in labels:
                    branches.add((form, kind, label))
                    self._plain.setdefault(form, label)
        self._labels = tuple(sorted(labels, key=len, reverse=True))
        self._short, self._long = _matchers(tuple(sorted(branches, key=repr)))

    @property
    def values(self) -> list[Any]:
        return [v for v, _ in self._entries]

    @property
    def texts(self) -> frozenset[str]:
        """Every form of every value, as written."""
        return frozenset(self._plain)

    def __bool__(self) -> bool:
        return bool(self._plain)

    def __or__(self, other: Redactor) -> Redactor:
        return Redactor.labelled([*self._entries, *other._entries])

    def also(self, values: Iterable[Any]) -> Redactor:
        return self | Redactor(values)

    def within(self, text: str) -> Redactor:
        """Strikes out only the values that stand in ``text`` (what a step sent out), in any
        of their shapes."""
        return Redactor.labelled(e for e in self._entries if Redactor.labelled([e]).finds(text))

    def finds(self, text: str) -> bool:
        return bool(self._spans(text))

    def _spans(self, text: str) -> list[Span]:
        if not self._plain or not text:
            return []
        found: list[Span] = []
        if self._long.pattern is not None:
            bare = _Skeleton(text)
            for start, end, label in self._long.spans(bare.text):
                found.append((*bare.span(start, end), label))
        taken = [(s, e) for s, e, _ in found]
        for start, end, label in self._short.spans(text):
            if not any(s < end and start < e for s, e in taken):
                found.append((start, end, label))
        kept = self._label_spans(text)
        return sorted(
            (s, e, label)
            for s, e, label in found
            if not any(ks <= s and e <= ke for ks, ke in kept)
        )

    def _label_spans(self, text: str) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        for label in self._labels:
            at = text.find(label)
            while at >= 0:
                spans.append((at, at + len(label)))
                at = text.find(label, at + 1)
        return spans

    def text(self, text: str) -> str:
        """``text`` with every value struck out, before anything cuts, joins or normalises it."""
        spans = self._spans(text)
        if not spans:
            return text
        out: list[str] = []
        done = 0
        for start, end, label in spans:
            if start < done:  # (overlaps one struck out already)
                continue
            out += [text[done:start], label]
            done = end
        out.append(text[done:])
        return "".join(out)

    def kept(self, said: str | None, limit: int) -> str:
        """A person's words as they are kept (a reason): the values struck out, what shows
        nothing dropped and blanks run together, the values struck out again (in case what
        was dropped hid one), then cut at ``limit`` characters; empty when nothing readable
        was said."""
        text = self.text(visible(self.text(said or "")))
        return text[:limit].rstrip() if len(text) > limit else text

    def json(self, value: Any) -> Any:
        """``value`` (JSON data) with the values struck out of every string, keys included;
        a number or a boolean that is one of them is replaced whole."""
        if not self._plain or value is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bool | int | float):
            return self._plain.get(json.dumps(value), value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.json(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.json(v) for v in value]
        return self.text(str(value))
