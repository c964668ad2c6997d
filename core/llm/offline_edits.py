"""How the offline responder edits a candidate from a refinement said in plain words, where
a model would rewrite it: a replacement ("change X to Y", "replace X with Y", "swap X for
Y", "instead of X use Y", "Y instead of X", "X -> Y") or a removal ("without X", "drop X",
"no X", "skip X") edits the candidate where X stands in it; anything else is an addition,
joined after a "; " without its lead-in ("and", "also", "plus", "make it", "make sure",
"too"). A replacement or removal of words the candidate does not hold becomes an addition
("without X"), so nothing people said is dropped.

``edit(current, said)`` returns the new text and what it did, or None when the change is
already in the candidate."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["Edited", "edit"]

Kind = Literal["replaced", "removed", "added", "edited"]  # edited: more than one of them


@dataclass(frozen=True)
class Edited:
    text: str
    kind: Kind


_I = re.IGNORECASE
_PLEASE = (
    r"^(?:(?:ok(?:ay)?|so|and|also|oh|hmm|actually|wait)[,.!]?\s+)*(?:please\s+)?"
    r"(?:let'?s\s+|can we\s+|could we\s+|we should\s+)?"
)
_USE = (
    r"(?:let'?s\s+)?(?:use|do|go with|go for|try|pick|have|take|add|get|put in|make it|"
    r"move it to|change it to|switch to|push it to)"
)
_REPLACE = [
    re.compile(
        _PLEASE + r"(?:move|change|push|shift|bump) it from\s+(?P<old>.+?)\s+to\s+(?P<new>.+)$",
        _I,
    ),
    re.compile(
        _PLEASE
        + r"(?:change|switch|turn|update|bump|move)\s+(?P<old>.+?)\s+(?:to|into)\s+(?P<new>.+)$",
        _I,
    ),
    re.compile(
        _PLEASE + r"(?:replace|swap|trade)\s+(?P<old>.+?)\s+(?:with|for|by)\s+(?P<new>.+)$", _I
    ),
    re.compile(_PLEASE + rf"instead of\s+(?P<old>.+?)(?:,\s*|\s+){_USE}\s+(?P<new>.+)$", _I),
    re.compile(_PLEASE + rf"{_USE}\s+(?P<new>.+?)\s+instead of\s+(?P<old>.+)$", _I),
    re.compile(_PLEASE + r"(?P<new>.+?)\s+instead of\s+(?P<old>.+)$", _I),
    re.compile(r"^(?P<old>[^>→]+?)\s*(?:->|→|=>)\s*(?P<new>.+)$", _I),
    re.compile(r"^s/(?P<old>[^/]+)/(?P<new>[^/]*)/?$", _I),
]
_REMOVE = re.compile(
    _PLEASE + r"(?:without|drop|remove|skip|no|minus|cut|lose|get rid of|leave out|take out|"
    r"don'?t (?:include|need|do|keep|want|bother with))\s+(?P<old>.+)$",
    _I,
)
_LEAD_IN = re.compile(
    r"^(?:(?:ok(?:ay)?|so|oh|hmm|actually)[,.!]?\s+)*(?:and also|and|also|plus|oh and|then|"
    r"but|with)\s+|^(?:please\s+)?(?:make it|make them|make sure(?: that)?|let'?s also|"
    r"change it so(?: that)?|so that|"
    r"we should also|we also need to|it should|it needs to)\s+",
    _I,
)
_TAIL = re.compile(r"[\s,]+(?:too|as well|also)$", _I)
_ARTICLE = re.compile(r"^(?:the|a|an|our|that|this)\s+", _I)
# what joins a part of a candidate to the one before it
_JOINER = r"(?:\s*[;,]\s*(?:(?:and|with|plus)\s+)?|\s+(?:with|and|plus|\+)\s+)"


# where one turn asks for several edits: "make it managed, without the read replicas"
_CLAUSE = re.compile(
    r"\s*[;,]?\s+(?:and|plus) (?:also|then)\s+|\s*[;,]\s+(?:and|plus|also|then)\s+"
    r"|\s*(?:[;,]|\s(?:and|but))\s+(?:and\s+|but\s+|also\s+|then\s+)?(?=(?:without|drop|"
    r"remove|skip|no|minus|change|replace|swap|instead of|make it|make sure|add|also|plus|keep)\s)",
    _I,
)
_STOP = frozenset(
    "the a an and or but for of to in on at by with from this that it its our we be is are "  # noqa: SIM905
    "no not dont don't keep drop skip remove without".split()
)


def edit(current: str, said: str) -> Edited | None:
    """``current`` as ``said`` edits it, clause by clause; None when nothing changes."""
    text, kinds = current, []
    for clause in _CLAUSE.split(said.strip()):
        edited = _edit_one(text, clause)
        if edited is not None:
            text = edited.text
            kinds.append(edited.kind)
    if not kinds:
        return None
    return Edited(text, kinds[0] if len(set(kinds)) == 1 else "edited")


def _edit_one(current: str, said: str) -> Edited | None:
    change = said.strip().rstrip(".!").strip()
    asked = None  # a replacement asked for, of words the candidate does not hold
    for pattern in _REPLACE:
        found = pattern.match(change)
        if found is None:
            continue
        old, new = _bare(found["old"]), found["new"].strip().rstrip(".!")
        span = _find(current, old)
        if span is None or not new:
            asked = asked or new
            continue
        start, end = span
        if _ARTICLE.search(current[max(0, start - 4) : start] + "|"):
            new = _ARTICLE.sub("", new) or new  # "with the leads": no "the the"
        return Edited(current[:start] + new + current[end:], "replaced")
    if asked is not None:
        return _added(current, asked if _find(current, asked) is None else change)
    removal = _REMOVE.match(change)
    if removal is not None:
        old = _bare(removal["old"])
        dropped = _without(current, old)
        if dropped is not None:
            return Edited(dropped, "removed")
        return _added(current, change)  # not in it: said as it was ("without the webinar")
    return _added(current, _TAIL.sub("", _LEAD_IN.sub("", change)) or change)


def _added(current: str, part: str) -> Edited | None:
    part = part.strip().rstrip(".!").strip()
    if not part or _find(current, part) is not None:
        return None  # already in it
    return Edited(f"{current}; {part}", "added")


def _bare(words: str) -> str:
    """``words`` without a leading article ("the read replica" finds "read replica")."""
    words = words.strip().rstrip(".!").strip()
    return _ARTICLE.sub("", words) or words


def _find(text: str, words: str) -> tuple[int, int] | None:
    if not words:
        return None
    found = re.search(rf"(?<!\w){re.escape(words)}(?!\w)", text, _I)
    return None if found is None else found.span()


def _without(current: str, old: str) -> str | None:
    """``current`` without ``old``. The candidate's parts are what "; ", ", ", " with ",
    " and " join: a part that is ``old`` goes with its joiner; a part that opens with it
    loses those words and the joiner before them ("blog post and newsletter for the release"
    without the newsletter); a part that holds it elsewhere goes whole ("one read replica"
    for "drop the replicas"); failing all that, the one part after the head that shares the
    most words with it ("drop the blog announcement" drops "announce it on the blog"). None
    when nothing matches or nothing would be left."""
    pieces = re.split(f"({_JOINER})", current, flags=_I)
    parts, joiners = pieces[::2], pieces[1::2]
    if len(parts) == 1:
        return None
    opening = re.compile(rf"^(?:(?:the|a|an)\s+)?{re.escape(old)}(?!\w)\s*", _I)
    for k, part in enumerate(parts[1:], 1):
        found = opening.match(part)
        coordinated = joiners[k - 1].strip() in ("and", "plus", "&")  # one phrase: "X and Y for Z"
        if found is not None and coordinated and found.end() < len(part):
            parts[k] = " " + part[found.end() :]
            del joiners[k - 1]
            return _tidy(_joined(parts, joiners, k))
    holding = [k for k, part in enumerate(parts) if _find(part, old) is not None]
    if not holding:
        wanted = _stems(old)
        shared = [len(wanted & _stems(part)) for part in parts[1:]]
        best = max(shared, default=0)
        if best == 0 or shared.count(best) > 1:
            return None
        holding = [shared.index(best) + 1]
    k = holding[-1]  # the last part that holds it: the head names the idea
    del parts[k]
    del joiners[k - 1 if k > 0 else 0]
    return _tidy(_joined(parts, joiners))


def _joined(parts: list[str], joiners: list[str], glued: int | None = None) -> str:
    """``parts`` joined by ``joiners`` again; part ``glued`` lost its joiner and follows the
    one before it directly."""
    text = parts[0]
    rest = iter(joiners)
    for k, part in enumerate(parts[1:], 1):
        text += part if k == glued else next(rest) + part
    return text


def _tidy(text: str) -> str | None:
    return re.sub(r"\s{2,}", " ", text).strip(" ;,") or None


def _stems(text: str) -> set[str]:
    """Words that say what ``text`` is about, by their first five letters ("recording" and
    "record it" meet)."""
    return {w[:5] for w in re.findall(r"[a-z0-9&]+", text.lower()) if w not in _STOP and len(w) > 2}
