"""What a session keeps of its last few turns, so that the next one is read in its context
("yes" after a proposal agrees with it; after a factual question it answers it): each
turn's act as the loop read it, its writer, whether it asked something, and short digests
of its content words (so a later turn can say how much of it repeats) — never its words.
With what is on the table (its words as digests, who asked for it, how many turns ago) and
whether the turn replies to someone, this is the ``TurnContext`` a classifier reads beside
the turn. It is interaction state: bounded, typed, kept as long as the session is, and no
transcript (a model call is given these features, never the messages they came from)."""

from __future__ import annotations

import hashlib
import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from core.deliberation.interpretation import ActType

__all__ = [
    "MAX_RECENT",
    "MAX_WORDS",
    "OnTable",
    "RecentTurn",
    "TurnContext",
    "asks",
    "remembered",
    "shared",
    "word_digests",
]

MAX_RECENT = 5  # earlier turns a session keeps for reading the next one
MAX_WORDS = 16  # content words kept of one turn (or of the candidate), as digests

Digest = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{6}$")]
Who = Annotated[str, StringConstraints(max_length=128)]

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


class RecentTurn(BaseModel):
    """One earlier turn, as features."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    act: ActType
    who: Who | None = None  # its writer (an actor id), if known
    asked: bool = False  # it ended with a question mark
    replying: bool = False  # it replied to someone
    words: tuple[Digest, ...] = Field(default=(), max_length=MAX_WORDS)


class OnTable(BaseModel):
    """The candidate on the table, as features: its content words, who asked for it, and
    how many turns ago it was put there."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    words: tuple[Digest, ...] = Field(default=(), max_length=MAX_WORDS)
    by: Who | None = None
    turns_ago: int = Field(default=0, ge=0)


class TurnContext(BaseModel):
    """What the runtime knows at a turn besides its text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    writer: Who | None = None
    recent: tuple[RecentTurn, ...] = Field(default=(), max_length=MAX_RECENT)  # oldest first
    on_table: OnTable | None = None
    replying: bool = False  # it replies to someone (a platform's reply, an @mention)


def word_digests(text: str) -> tuple[str, ...]:
    """Digests of ``text``'s content words (compared by their first five letters, so that
    "replica" and "replicas" meet), first seen first, at most ``MAX_WORDS``."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if len(word) > 3 and word not in _FILLER:
            seen.setdefault(hashlib.blake2s(word[:5].encode(), digest_size=3).hexdigest())
            if len(seen) == MAX_WORDS:
                break
    return tuple(seen)


def asks(text: str) -> bool:
    """Whether ``text`` ends with a question mark (what follows it in chat aside)."""
    return text.rstrip(" \t\n!.)").endswith("?")


def shared(words: tuple[str, ...], earlier: tuple[str, ...]) -> float:
    """The share of ``words`` that ``earlier`` holds too (0 when ``words`` is empty)."""
    if not words:
        return 0.0
    return len(set(words) & set(earlier)) / len(words)


def remembered(recent: list[RecentTurn], turn: RecentTurn) -> list[RecentTurn]:
    """``recent`` with ``turn`` as its newest, the last ``MAX_RECENT`` kept."""
    return [*recent, turn][-MAX_RECENT:]
