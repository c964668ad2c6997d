"""How well a classifier reads labelled turns: accuracy, precision and recall per act, the
confusion matrix, and the two rates that matter most to the loop: how often a turn that is
not a commit is routed as one (a "Use this" under a half-formed thought), and how often a
commit is missed. Shared by ``deliberate classify --eval`` and ``bench/``.

Also the regular-expression baseline the embedded classifier must beat: a ``?`` means a
question, short agreement words a commit, greetings and thanks a tangent, "I think" or
"maybe" a brainstorm, anything else a brainstorm."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.deliberation.interpretation import ActType

__all__ = ["Scores", "evaluate", "regex_baseline", "table"]

COMMIT = ActType.COMMIT

_AGREE = re.compile(
    r"^\W*(yes|yeah|yep|yup|ok(ay)?|sure|agreed?|deal|done|sounds good|let'?s (do|go)\b.*|"
    r"go (for|with) it|ship it|do it|fine|perfect|great)\W*$",
    re.IGNORECASE,
)
_GREET = re.compile(
    r"\b(hi|hello|hey|hiya|thanks|thank you|thx|lol|lmao|haha+|bye|good (morning|night))\b",
    re.IGNORECASE,
)
_IDEA = re.compile(r"\b(i think|maybe|perhaps|what if|how about|we could)\b", re.IGNORECASE)


def regex_baseline(text: str) -> ActType:
    """The six-line baseline: no model, no training."""
    if "?" in text:
        return ActType.QUESTION
    if len(text.split()) <= 4 and _AGREE.match(text):
        return ActType.COMMIT
    if _GREET.search(text):
        return ActType.TANGENT
    if _IDEA.search(text):
        return ActType.BRAINSTORM
    return ActType.BRAINSTORM  # a statement: the commonest act of a deliberation


@dataclass(frozen=True)
class Scores:
    """``truth`` and ``predicted`` side by side, and what follows from them. ``acts``: the
    acts the labelled turns carry (an act no turn carries is left out of the averages)."""

    truth: tuple[ActType, ...]
    predicted: tuple[ActType, ...]

    @property
    def n(self) -> int:
        return len(self.truth)

    @property
    def acts(self) -> list[ActType]:
        return [act for act in ActType if act in self.truth]

    @property
    def accuracy(self) -> float:
        hits = sum(t == p for t, p in zip(self.truth, self.predicted, strict=True))
        return hits / self.n if self.n else 0.0

    def precision(self, act: ActType) -> float:
        said = [t for t, p in zip(self.truth, self.predicted, strict=True) if p is act]
        return sum(t is act for t in said) / len(said) if said else 0.0

    def recall(self, act: ActType) -> float:
        real = [p for t, p in zip(self.truth, self.predicted, strict=True) if t is act]
        return sum(p is act for p in real) / len(real) if real else 0.0

    def count(self, act: ActType) -> int:
        return sum(t is act for t in self.truth)

    def confusion(self) -> dict[ActType, dict[ActType, int]]:
        """``confusion()[truth][predicted]``: how many turns of each act went where."""
        matrix = {t: dict.fromkeys(ActType, 0) for t in ActType}
        for t, p in zip(self.truth, self.predicted, strict=True):
            matrix[t][p] += 1
        return matrix

    @property
    def false_commit_rate(self) -> float:
        """Of the turns that are not commits, the share taken for one."""
        others = [p for t, p in zip(self.truth, self.predicted, strict=True) if t is not COMMIT]
        return sum(p is COMMIT for p in others) / len(others) if others else 0.0

    @property
    def missed_commit_rate(self) -> float:
        """Of the commits, the share taken for something else."""
        return 1.0 - self.recall(COMMIT) if self.count(COMMIT) else 0.0


def evaluate(truth: Sequence[ActType], predicted: Sequence[ActType]) -> Scores:
    if len(truth) != len(predicted):
        raise ValueError(f"{len(truth)} labels, {len(predicted)} predictions")
    return Scores(tuple(truth), tuple(predicted))


def table(scores: Scores) -> list[str]:
    """The scores as Markdown lines: a summary, precision and recall per act, the confusion
    matrix (rows: the label; columns: what was predicted)."""
    acts = scores.acts
    shown = [act for act in ActType if act in acts or any(p is act for p in scores.predicted)]
    lines = [
        f"{scores.n} turns: accuracy **{scores.accuracy:.1%}**, false-commit "
        f"**{scores.false_commit_rate:.1%}** (of the turns that are not commits), missed "
        f"commits {scores.missed_commit_rate:.1%}",
        "",
        "| act | precision | recall | n |",
        "|---|---|---|---|",
    ]
    for act in acts:
        lines.append(
            f"| {act.value} | {scores.precision(act):.0%} | {scores.recall(act):.0%} | "
            f"{scores.count(act)} |"
        )
    matrix = scores.confusion()
    lines += ["", "| label \\ predicted | " + " | ".join(a.value for a in shown) + " |"]
    lines.append("|---" * (len(shown) + 1) + "|")
    for act in acts:
        lines.append(f"| {act.value} | " + " | ".join(str(matrix[act][p]) for p in shown) + " |")
    return lines
