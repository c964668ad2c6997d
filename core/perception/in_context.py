"""A turn read in its context: what the session's ``TurnContext`` (``core.deliberation.recent``)
says of the turn in hand, in one typed form that both classifiers read. The embedded model
gets it as features (``ctx:...``, learned like any other: "yes" after a proposal, "yes"
after a question, "same" while an idea is on the table, a turn that repeats the candidate's
words); a chat model gets the same facts in its frame's ``context_state``. Neither gets an
earlier message's words: only their acts, whether their writer is this turn's, whether
they asked, and how much of them this turn repeats."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.deliberation.recent import TurnContext, shared, word_bits
from core.perception.features import normalise, unaddressed

__all__ = ["SHORT", "Earlier", "InContext", "context_features", "in_context"]

SHORT = 3  # a turn of this many words or fewer means little without what came before it
REPEATS = 0.5  # the share of a turn's content words an earlier turn holds to be repeated
_WORD = re.compile(r"[a-z0-9+]+|[\u2600-\u27bf\U0001f300-\U0001faff]")


@dataclass(frozen=True)
class Earlier:
    """An earlier turn, as this one sees it (``shares``: the part of this turn's content
    words it holds)."""

    act: str
    by_writer: bool
    asked: bool
    shares: float


@dataclass(frozen=True)
class InContext:
    earlier: tuple[Earlier, ...]  # oldest first
    on_table: bool
    table_by_writer: bool | None  # None: nobody known asked for it
    table_turns_since: int | None  # turns said since the one it answered (0: this is the next)
    repeats_table: float  # the part of this turn's content words the candidate holds
    replying: bool

    def frame(self) -> dict[str, Any]:
        """The same facts for a chat model's ``context_state``."""
        view: dict[str, Any] = {
            "earlier_turns": [
                {
                    "act": e.act,
                    "by": "the same writer" if e.by_writer else "someone else",
                    "asked": e.asked,
                    "repeated_by_this_turn": round(e.shares, 2),
                }
                for e in self.earlier
            ],
            "replies_to_someone": self.replying,
        }
        if self.on_table:
            view["candidate_on_table"] = {
                "asked_for_by": None
                if self.table_by_writer is None
                else "this writer"
                if self.table_by_writer
                else "someone else",
                "turns_said_since": self.table_turns_since,
                "repeated_by_this_turn": round(self.repeats_table, 2),
            }
        return view


def in_context(text: str, context: TurnContext) -> InContext:
    """What ``context`` says of ``text``."""
    words = word_bits(text)
    writer = context.writer
    earlier = tuple(
        Earlier(
            act=turn.act.value,
            by_writer=writer is not None and turn.who == writer,
            asked=turn.asked,
            shares=shared(words, turn.words),
        )
        for turn in context.recent
    )
    table = context.on_table
    return InContext(
        earlier=earlier,
        on_table=table is not None,
        table_by_writer=None
        if table is None or table.by is None or writer is None
        else table.by == writer,
        table_turns_since=None if table is None else table.turns_since,
        repeats_table=0.0 if table is None else shared(words, table.words),
        replying=context.replying,
    )


def context_features(text: str, context: TurnContext | None) -> list[str]:
    """The ``ctx:`` features of ``text`` read in ``context`` (none without one)."""
    return [] if context is None else list(_context_features(text, context))


@lru_cache(maxsize=16)  # (a turn is read in its context twice: by the model, for its marks)
def _context_features(text: str, context: TurnContext) -> tuple[str, ...]:
    seen = in_context(text, context)
    tokens = _WORD.findall(unaddressed(normalise(text)))
    short = len(tokens) <= SHORT
    found: list[str] = []
    before = [e for e in seen.earlier if not e.by_writer]
    last = seen.earlier[-1] if seen.earlier else None
    other = before[-1] if before else None  # the newest turn by someone else
    if last is not None and last.by_writer:
        found.append("ctx:after-self")
    if other is not None:
        found += [f"ctx:prev={other.act}", *(["ctx:prev-asked"] if other.asked else [])]
        if short:
            found += ["ctx:short", f"ctx:short&prev={other.act}"]
            found += ["ctx:short&prev-asked"] if other.asked else []
            found += [f"ctx:{tokens[0]}&prev={other.act}"] if tokens else []
        if other.shares >= REPEATS:
            found.append(f"ctx:repeats&prev={other.act}")
    if seen.on_table:
        found.append("ctx:table")
        if short:
            found.append("ctx:short&table")
        if seen.repeats_table >= REPEATS:
            found.append("ctx:repeats-table")
        if seen.table_turns_since is not None and seen.table_turns_since <= 1:
            found.append("ctx:table-fresh")
    if any(e.act == "brainstorm" and e.shares >= REPEATS for e in before):
        found.append("ctx:repeats-idea")
    if seen.replying:
        found.append("ctx:replying")
    return tuple(found)
