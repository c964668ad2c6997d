"""The words a regular expression cannot match without: a cheap test before its search.

The classifier searches every turn for some forty cues (``cues.py``), and most cues match
nothing in most turns; a search of ``\\b(a|b|...)`` still tries every position of the turn
(Python's ``re`` finds no prefix to skip to behind a ``\\b``), about 2 µs a cue. Each cue
names words it cannot match without (``\\blet'?s (go|roll)`` cannot without "let"), and
``str.__contains__`` rules out a turn with none of them at a small part of that cost. What
is found is unchanged: a search is skipped only where it cannot match.

The words are read from the pattern's parse (``re._parser``, CPython's own): a run of
literal characters must appear whole in a match; of alternatives, one of each's words; a
group, or a repeat of at least one, what its body needs. Anything else (a class, an
assertion, an optional part, a case-insensitive pattern) needs nothing that is known, and a
pattern that needs nothing known is always searched."""

from __future__ import annotations

import re
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

__all__ = ["Needs", "needed_words"]

Needs = frozenset[str] | None  # one of these words is in every match; None: nothing known


def needed_words(pattern: re.Pattern[str]) -> Needs:
    """Words one of which every match of ``pattern`` contains (None: none known)."""
    if pattern.flags & re.IGNORECASE:
        return None
    items = _parser.parse(pattern.pattern, pattern.flags).data
    if items and items[0] == (sre.AT, sre.AT_BEGINNING):
        return None  # searched at the start alone: as quick as any test before it
    return _sequence(items)


def _sequence(items: list[tuple[Any, Any]]) -> Needs:
    """What a sequence of parsed items needs: the most telling of what each needs."""
    found: list[frozenset[str]] = []
    run = ""
    for op, av in items:
        if op is sre.LITERAL:
            run += chr(av)
            continue
        if run:
            found.append(frozenset([run]))
            run = ""
        need = _item(op, av)
        if need is not None:
            found.append(need)
    if run:
        found.append(frozenset([run]))
    if not found:
        return None
    # the longest shortest word, then the fewest words: the likeliest to rule a turn out
    return max(found, key=lambda words: (min(len(w) for w in words), -len(words)))


def _item(op: Any, av: Any) -> Needs:
    if op is sre.SUBPATTERN:
        _group, add_flags, _del_flags, body = av
        return None if add_flags & sre.SRE_FLAG_IGNORECASE else _sequence(body)
    if op is sre.BRANCH:
        alternatives = [_sequence(body) for body in av[1]]
        if any(need is None for need in alternatives):
            return None
        return frozenset().union(*alternatives)  # type: ignore[arg-type]
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        least, _most, body = av
        return _sequence(body) if least >= 1 else None
    if op is sre.ATOMIC_GROUP:
        return _sequence(av)
    return None  # a class, any character, an assertion, a back reference: nothing known
