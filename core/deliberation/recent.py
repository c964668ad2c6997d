"""What a session keeps of its last few turns, so that the next one is read in its context
("yes" after a proposal agrees with it; after a factual question it answers it): each
turn's act as the loop read it, its writer, whether it asked something, and a sketch of its
content words (so a later turn can say how much of it repeats) — never its words. A sketch
is 128 bits, each content word setting one (its first five letters hashed): some 1 in 128 of
all words sets any one bit, so no word can be read back from it, while a later turn's words
are nearly all found in it when it repeats them (a word of its own finds a bit set by
another about one time in eight).
With what is on the table (its words as digests, who asked for it, how many turns ago) and
whether the turn replies to someone, this is the ``TurnContext`` a classifier reads beside
the turn. It is interaction state: bounded, typed, kept as long as the session is, and no
transcript (a model call is given these features, never the messages they came from).

The newest turn also keeps its ``marks``: ``MARKS`` bits, each of the words and word pairs
the embedded classifier reads in it (short ones too: "ack", "yes") setting one
(``core.perception.team.marks``). A click that says
the loop misread it ("Use this" after it was read as an idea, "Try another angle" after it
was read as agreement) teaches them to the workspace's own weights
(``core.perception.team``); the next turn, or the lesson, clears them."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from core.cached_models import Copied
from core.deliberation.interpretation import ActType

__all__ = [
    "MARKS",
    "MAX_RECENT",
    "MAX_WORDS",
    "Marks",
    "OnTable",
    "RecentTurn",
    "TurnContext",
    "asks",
    "marks_bits",
    "remembered",
    "shared",
    "sketch",
    "word_bits",
]

MAX_RECENT = 5  # earlier turns a session keeps for reading the next one
MAX_WORDS = 16  # content words of one turn (or of the candidate) in its sketch
BITS = 128

Sketch = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32}$")]
EMPTY = "0" * (BITS // 4)
MARKS = 1024  # the bits of a turn's marks
Marks = Annotated[str, StringConstraints(pattern=r"^([0-9a-f]{256})?$")]  # "": none kept
# an actor as ``kind:id``: an id of up to 128 characters and the longest kind
Who = Annotated[str, StringConstraints(max_length=160)]

_WORD = re.compile(r"[a-z0-9]+")
# words that say nothing of what a turn is about (the longer ones: a word of three letters
# or fewer is never a content word)
_FILLER = frozenset(
    {
        *("also", "that", "this", "then", "than", "with", "from", "have", "were", "will", "would"),
        *("could", "should", "what", "when", "where", "which", "there", "their", "they", "them"),
        *("your", "just", "like", "think", "good", "sure", "yeah", "okay", "pick", "picked"),
        *("went", "chose", "choose", "about", "really", "maybe", "some", "more", "well", "same"),
        *("does", "done", "into", "only", "very", "much"),
    }
)


class RecentTurn(Copied):
    """One earlier turn, as features."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    act: ActType
    who: Who | None = None  # its writer (an actor id), if known
    asked: bool = False  # it ended with a question mark
    replying: bool = False  # it replied to someone
    words: Sketch = EMPTY
    marks: Marks = ""  # the newest turn's, until the next turn or a click's lesson


class OnTable(BaseModel):
    """The candidate on the table, as features: a sketch of its content words, who asked
    for it, and how many turns were said since the one it answered (0: this turn is the
    next; None: not known, a session older than these fields)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    words: Sketch = EMPTY
    by: Who | None = None
    turns_since: int | None = Field(default=None, ge=0)


class TurnContext(BaseModel):
    """What the runtime knows at a turn besides its text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    writer: Who | None = None
    recent: tuple[RecentTurn, ...] = Field(default=(), max_length=MAX_RECENT)  # oldest first
    on_table: OnTable | None = None
    replying: bool = False  # it replies to someone (a platform's reply, an @mention)


@lru_cache(maxsize=128)  # a turn's words are read four times (its sketch, in context, marks)
def word_bits(text: str) -> frozenset[int]:
    """The bits ``text``'s content words set (its first ``MAX_WORDS``, each compared by its
    first five letters, so that "replica" and "replicas" meet)."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if len(word) > 3 and word not in _FILLER:
            seen.setdefault(word[:5])
            if len(seen) == MAX_WORDS:
                break
    return frozenset(
        int.from_bytes(hashlib.blake2s(stem.encode(), digest_size=2).digest(), "big") % BITS
        for stem in seen
    )


def sketch(text: str) -> str:
    """The sketch of ``text``'s content words, as 32 hex digits."""
    return f"{sum(1 << bit for bit in word_bits(text)):0{BITS // 4}x}"


def asks(text: str) -> bool:
    """Whether ``text`` ends with a question mark (what follows it in chat aside)."""
    return text.rstrip(" \t\n!.)").endswith("?")


def shared(bits: frozenset[int], earlier: str) -> float:
    """The share of a turn's word ``bits`` that the sketch ``earlier`` holds too (0 when it
    has none)."""
    if not bits:
        return 0.0
    held = int(earlier, 16)
    return sum(1 for bit in bits if held >> bit & 1) / len(bits)


def remembered(recent: list[RecentTurn], turn: RecentTurn) -> list[RecentTurn]:
    """``recent`` with ``turn`` as its newest, the last ``MAX_RECENT`` kept (only the
    newest keeps its marks)."""
    older = [t.model_copy(update={"marks": ""}) if t.marks else t for t in recent]
    return [*older, turn][-MAX_RECENT:]


def marks_bits(held: str) -> frozenset[int]:
    """The bits set in ``held`` (``marks``'s hex)."""
    number = int(held, 16) if held else 0
    return frozenset(bit for bit in range(MARKS) if number >> bit & 1)
