"""A team's own way of agreeing: per workspace, a small table of weights learned from its
clicks, added to the shipped model's when the embedded classifier reads a turn.

A click is a label the team gives for free. "Use this" right after a turn the loop read as
something else says that turn agreed; "Try another angle" right after a turn it read as
agreement says it did not (and no more: not what it was instead). Each such click teaches
the turn's ``marks`` (``marks``: its words, word pairs and what it read around them, hashed
into ``MARKS`` bits; never the words) one perceptron step: the act it was up by ``RATE``
(commit, after "Use this"), the act it was read as down, each weight within ``BOUND``, and
all the weights of one turn together within ``MAX_LEAN`` an act (a long turn sets many
bits). So the table is bounded by construction (``MARKS`` rows of five numbers), each click
teaches once (its lessons' ids are kept: a lesson sent again changes nothing), and it
decays: every weight halves each ``HALF_LIFE_DAYS`` after the last lesson. A turn whose
reading the table changes is read by "embedded+team" (on the trace and in the metrics);
each lesson is on the trace too.

The step and the bound are small on purpose (``bench/team_adaptation.py``): a meeting's few
clicks teach words that its next half uses otherwise, and larger steps found more commits
for many more false ones. One workspace's table is never read by another's; the setting
``perception.adapt: false`` turns it off, and ``deliberate perception status|reset`` shows
and clears it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.deliberation.interpretation import ActType
from core.deliberation.recent import MARKS, TurnContext, marks_bits
from core.perception.features import features
from core.perception.in_context import context_features

__all__ = [
    "BOUND",
    "HALF_LIFE_DAYS",
    "KEPT_IDS",
    "MAX_LEAN",
    "RATE",
    "Lesson",
    "TeamWeights",
    "bits_of",
    "marked",
    "marks",
]

RATE = 0.05  # one click's step
BOUND = 0.25  # the largest weight (a learned word's weights are mostly 0.5 to 3)
MAX_LEAN = 1.0  # the most the table adds to (or takes from) one act of one turn
KEPT_IDS = 64  # the newest lessons' ids kept, so that a lesson sent again teaches nothing
_LATEST_MS = 7_258_118_400_000  # 2200-01-01: a later lesson is no lesson of ours
HALF_LIFE_DAYS = 14
_HALF_LIFE_MS = HALF_LIFE_DAYS * 86_400_000
_ACTS = list(ActType)
_TINY = 1e-4  # a decayed weight below this is dropped


def marked(
    text: str, context: TurnContext | None = None, topic: str | None = None
) -> frozenset[int]:
    """The bits of ``text``'s marks: each word and pair of neighbouring words the embedded
    classifier reads in it (``features.py``: lower-cased, a "nick:" address set aside, the
    start and the end of the turn as words of their own) and what it reads of it in
    ``context`` ("a short turn after an idea", ``in_context.py``), hashed. The session's
    ``topic`` changes no mark: given, the features the classifier read the turn with
    (cached by text and topic) are taken, not read again."""
    return bits_of(features(text, topic) + context_features(text, context))


def bits_of(found: Iterable[str]) -> frozenset[int]:
    """The bits of marks that the features ``found`` set (its words, pairs and ``ctx:``
    features; the rest of a turn's features say nothing a team teaches)."""
    return frozenset(_bit(name) for name in found if name.startswith(("w:", "b:", "ctx:")))


@lru_cache(maxsize=4096)
def _bit(gram: str) -> int:
    return int.from_bytes(hashlib.blake2s(gram.encode(), digest_size=4).digest(), "big") % MARKS


def marks(text: str, context: TurnContext | None = None, topic: str | None = None) -> str:
    """``text``'s marks, as kept with the newest turn (hex; "" for a turn with no word)."""
    bits = marked(text, context, topic)
    return f"{sum(1 << bit for bit in bits):0{MARKS // 4}x}" if bits else ""


@dataclass(frozen=True)
class Lesson:
    """What one click teaches: the turn's ``marks`` were ``was`` (None: only not
    ``read_as``), not ``read_as``; ``by``: the click's id, taught once."""

    marks: str
    was: ActType | None
    read_as: ActType
    by: str


class TeamWeights(BaseModel):
    """``rows``: per bit of a turn's marks, a weight per act (in ``ActType``'s order);
    ``lessons``: the clicks that taught it; ``taught_ms``: when the last one did (epoch ms:
    the weights decay from then)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    rows: dict[int, tuple[float, ...]] = Field(default_factory=dict, max_length=MARKS)
    lessons: int = Field(default=0, ge=0)
    taught_ms: int = Field(default=0, ge=0, le=_LATEST_MS)
    taught_by: tuple[str, ...] = Field(default=(), max_length=KEPT_IDS)

    @field_validator("rows")
    @classmethod
    def _bounded(cls, rows: dict[int, tuple[float, ...]]) -> dict[int, tuple[float, ...]]:
        for bit, row in rows.items():
            if not 0 <= bit < MARKS:
                raise ValueError(f"bit {bit} is outside 0..{MARKS - 1}")
            if len(row) != len(_ACTS) or any(abs(w) > BOUND for w in row):
                raise ValueError(f"bit {bit}: {len(_ACTS)} weights within ±{BOUND} expected")
        return rows

    def at(self, now_ms: int) -> TeamWeights:
        """The table as it has decayed by ``now_ms``."""
        if not self.rows or now_ms <= self.taught_ms:
            return self
        factor = 0.5 ** ((now_ms - self.taught_ms) / _HALF_LIFE_MS)
        rows = {bit: tuple(w * factor for w in row) for bit, row in self.rows.items()}
        kept = {bit: row for bit, row in rows.items() if any(abs(w) >= _TINY for w in row)}
        return self.model_copy(update={"rows": kept, "taught_ms": now_ms})

    def leans(self, bits: Iterable[int]) -> list[float]:
        """What the table adds to each act's logit for a turn with marks ``bits`` (each act's
        within ``MAX_LEAN``)."""
        total = [0.0] * len(_ACTS)
        for bit in sorted(bits):
            row = self.rows.get(bit)
            if row is not None:
                total = [a + b for a, b in zip(total, row, strict=True)]
        return [max(-MAX_LEAN, min(MAX_LEAN, lean)) for lean in total]

    def learned(self, lesson: Lesson, now_ms: int) -> TeamWeights:
        """The table after ``lesson`` (decayed to ``now_ms`` first)."""
        bits = marks_bits(lesson.marks)
        if not bits or lesson.was is lesson.read_as or lesson.by in self.taught_by:
            return self
        base = self.at(now_ms)
        down = _ACTS.index(lesson.read_as)
        up = None if lesson.was is None else _ACTS.index(lesson.was)
        rows = dict(base.rows)
        for bit in bits:
            row = list(rows.get(bit, (0.0,) * len(_ACTS)))
            if up is not None:
                row[up] = min(BOUND, row[up] + RATE)
            row[down] = max(-BOUND, row[down] - RATE)
            rows[bit] = tuple(row)
        return TeamWeights(
            rows=rows,
            lessons=base.lessons + 1,
            taught_ms=min(max(now_ms, base.taught_ms), _LATEST_MS),
            taught_by=(*base.taught_by, lesson.by)[-KEPT_IDS:],
        )

    @property
    def largest(self) -> float:
        """The largest weight's size (0.0 for an empty table)."""
        return max((abs(w) for row in self.rows.values() for w in row), default=0.0)
