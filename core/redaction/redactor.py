"""``Redactor``: known secret values struck out of text and JSON data, in every shape
``core.redaction.forms`` knows, by the one function every writer calls before it cuts,
joins or normalises anything (``text``; ``kept`` for a person's words).

How a text is searched: every form is looked for with ``str.find`` in the text's skeleton
(``Skeleton``: the text without its separators), and a match covers the text from its first
character to its last. A form of a value shorter than ``LONG`` (blanks aside) must stand in
the text as written, save that any run of separators may stand for its blanks (and one
shorter than ``MIN_INSIDE`` only as a word of its own); a longer value's forms are found
lowered, whatever separators were put in them or taken out, and their base64 as written.
Matches that overlap are struck out as one. Each is replaced by its value's label
(``(secret)`` unless said otherwise); labels already in the text are left alone, so that
striking out twice changes nothing the first time did not."""

from __future__ import annotations

import bisect
import itertools
import json
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from core.redaction.decoded import escaped, readings
from core.redaction.forms import LONG, MIN_INSIDE, Kind, forms
from core.redaction.invisible import visible
from core.redaction.skeleton import SEPARATOR, Skeleton, lowered, skeleton

__all__ = ["LONG", "MIN_INSIDE", "SECRET", "Redactor"]

SECRET = "(secret)"  # a secret value, wherever anything but where it is kept would show it

Span = tuple[int, int, str]  # start, end (in the text), the label that replaces it
Branch = tuple[str, Kind, str]  # a form, how it is matched, its label


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@lru_cache(maxsize=4096)
def _branches(key: str, label: str) -> tuple[Branch, ...]:
    """The forms of the value whose JSON is ``key``, each with ``label`` (cached: a redactor
    is made for each refusal, and the rules' for each step)."""
    return tuple((form, kind, label) for form, kind in forms(json.loads(key)) if skeleton(form))


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


class _Needle:
    """One form as it is looked for in a skeleton: ``text`` (lowered for a long form), and,
    for a short form, the parts its blanks part, which must stand as they are in the text,
    a run of separators where it has blanks and nowhere else (and around one shorter than
    ``MIN_INSIDE``, no letter)."""

    def __init__(self, form: str, kind: Kind, label: str) -> None:
        bare = skeleton(form)
        self.text = lowered(bare) if kind is Kind.LONG else bare
        self.lowered = kind is Kind.LONG
        self.label = label
        self.parts = [p for p in SEPARATOR.split(form) if p] if kind is Kind.SHORT else None
        self.word = kind is Kind.SHORT and len(form) < MIN_INSIDE  # (blanks counted)

    def stands(self, text: str, start: int, end: int) -> bool:
        """Whether a short form found at ``[start, end)`` of ``text`` stands there as
        written."""
        if self.parts is None:
            return True
        if [p for p in SEPARATOR.split(text[start:end]) if p] != self.parts:
            return False
        return not self.word or not (
            (start > 0 and _word(text[start - 1])) or (end < len(text) and _word(text[end]))
        )


class _Search:
    """The forms of some values made ready to be looked for in a text's skeleton."""

    def __init__(self, branches: tuple[Branch, ...]) -> None:
        needles: dict[tuple[object, ...], _Needle] = {}
        for branch in branches:  # (a value and its upper case are one needle, lowered)
            needle = _Needle(*branch)
            parts = tuple(needle.parts) if needle.parts is not None else None
            needles.setdefault((needle.text, needle.lowered, parts, needle.word), needle)
        self.needles = list(needles.values())

    def spans(self, text: str) -> list[Span]:
        """Where the forms stand in ``text``, each from its first character to its last;
        spans that overlap are one span (no part of either is left), labelled as the
        longest of them."""
        found: list[Span] = []
        # (where the text has a backslash, also with its backslashes as they are: "000\\"
        # before an "n" is that value, though "\\n" reads as a line break's escape)
        kinds = (True, False) if "\\" in text else (True,)
        for bare in (Skeleton(text, escapes) for escapes in kinds):
            low: str | None = None
            for needle in self.needles:
                where = bare.text
                if needle.lowered:
                    low = where = lowered(bare.text) if low is None else low
                at = where.find(needle.text)
                while at >= 0:
                    start, end = bare.span(at, at + len(needle.text))
                    if needle.stands(text, start, end):
                        found.append((start, end, needle.label))
                    at = where.find(needle.text, at + 1)
        return _merged(found)


def _merged(spans: list[Span]) -> list[Span]:
    merged: list[Span] = []
    longest = 0
    for start, end, label in sorted(spans):
        if merged and start < merged[-1][1]:
            last_start, last_end, last_label = merged[-1]
            if end - start > longest:
                last_label, longest = label, end - start
            merged[-1] = (last_start, max(end, last_end), last_label)
        else:
            merged.append((start, end, label))
            longest = end - start
    return merged


@lru_cache(maxsize=256)
def _search(branches: tuple[Branch, ...]) -> _Search:
    return _Search(branches)


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
        branches = {
            b
            for value, label in self._entries
            for b in _branches(_key(value), label)
            if b[0] not in labels
        }
        ordered = tuple(sorted(branches, key=lambda b: (b[0], b[1].value, b[2])))
        self._plain = {form: label for form, _, label in reversed(ordered)}
        self._labels = tuple(sorted(labels, key=len, reverse=True))
        self._search = _search(ordered)

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
        found = self._search.spans(text)
        if escaped(text):  # found again where its escapes are read: each escape whole
            read = [
                (*reading.span(s, e), label)
                for reading in readings(text)
                for s, e, label in self._search.spans(reading.text)
            ]
            found = _merged(found + read) if read else found
        return self._not_in_labels(text, found) if found else found

    def _not_in_labels(self, text: str, found: list[Span]) -> list[Span]:
        """``found`` but for the spans inside a label the text holds already. (Each span is
        held against the furthest end of the labels that start at or before it: one look
        each, however many labels and spans a text holds.)"""
        labels: list[tuple[int, int]] = []
        for label in self._labels:
            at = text.find(label)
            while at >= 0:
                labels.append((at, at + len(label)))
                at = text.find(label, at + 1)
        if not labels:
            return found
        labels.sort()
        starts = [start for start, _ in labels]
        reach = list(itertools.accumulate((end for _, end in labels), max))
        kept = []
        for start, end, label in found:
            at = bisect.bisect_right(starts, start) - 1
            if at < 0 or reach[at] < end:
                kept.append((start, end, label))
        return kept

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
