"""A multinomial logistic regression over sparse binary features, in plain Python.

Small enough to train in seconds on a laptop and to load at import without numpy. Training is
deterministic: a fixed number of epochs of AdaGrad SGD, in an order shuffled by a seeded
``random.Random``, with the L2 penalty applied to the weights an example touches. The saved
weights are rounded, which keeps ``weights.json`` compact and its diffs readable.
"""

from __future__ import annotations

import json
import math
import random
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import reduce
from itertools import repeat
from operator import add
from struct import Struct
from typing import Any

__all__ = ["Example", "LinearModel", "softmax", "train"]

Example = tuple[Sequence[str], int]  # (features, index of the true class)

_DIGITS = 4  # saved precision: far below what moves a prediction


@dataclass
class LinearModel:
    classes: list[str]
    bias: list[float]
    weights: dict[str, list[float]] = field(default_factory=dict)

    def logits(self, features: Iterable[str]) -> list[float]:
        """Bias plus the weights of the features present; unknown features weigh nothing.
        Each class's sum is added up in the features' order, as a loop would (``reduce``
        keeps that order, which ``sum`` does not promise: Python 3.12 compensates)."""
        get = self.weights.get
        rows = [row for name in features if (row := get(name)) is not None]
        return [reduce(add, column) for column in zip(self.bias, *rows, strict=True)]

    def to_json(self) -> dict[str, Any]:
        def rounded(row: list[float]) -> list[float]:
            return [round(w, _DIGITS) + 0.0 for w in row]  # + 0.0 turns -0.0 into 0.0

        kept = {name: rounded(row) for name, row in sorted(self.weights.items())}
        return {
            "classes": self.classes,
            "bias": rounded(self.bias),
            # a feature whose weights all round to zero changes nothing: leave it out
            "weights": {name: row for name, row in kept.items() if any(row)},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LinearModel:
        return cls(list(data["classes"]), list(data["bias"]), dict(data["weights"]))

    def dumps(self) -> str:
        """One feature a line: compact, and a retrain shows up as a readable diff."""
        data = self.to_json()
        rows = ",\n".join(
            f"  {json.dumps(name, ensure_ascii=False)}: {json.dumps(row)}"
            for name, row in data["weights"].items()
        )
        head = f'{{"classes": {json.dumps(data["classes"])}, "bias": {json.dumps(data["bias"])},'
        return f'{head}\n "weights": {{\n{rows}\n}}}}\n'


def softmax(logits: Sequence[float]) -> list[float]:
    top = max(logits)
    exps = [math.exp(x - top) for x in logits]
    total = sum(exps)
    return [e / total for e in exps]


def train(
    examples: Sequence[Example],
    classes: Sequence[str],
    *,
    epochs: int = 20,
    rate: float = 0.1,
    l2: float = 1e-3,
    seed: int = 0,
) -> LinearModel:
    """Fit the model to ``examples``; the same inputs always give the same weights.

    AdaGrad: per-weight step sizes, so that rare features (most words) still learn from
    their few examples while frequent ones (the bias, common cues) settle instead of
    oscillating. Each epoch visits the examples in a new shuffled order. For each: the logits
    (the bias plus the weights of its features, added up in its order; a feature met for the
    first time weighs nothing yet), the softmax less 1 for the true class as the errors, then
    a step on the bias and one on each of its features' weights in turn (a feature named twice
    steps twice, the second time from where the first left it). Weight k of a feature steps
    by ``grad = errors[k] + l2 * w``, ``squares += grad * grad`` and, if ``squares > 0``,
    ``w -= rate * grad / sqrt(squares)``; the bias by the same without the penalty.

    On the shipped corpus that is some seventy million weight steps. Kept as lists of floats,
    most of their time went on memory: a feature's weights and squares were a dozen objects
    scattered over the heap, each a cache miss when an example came back to it. Here each
    feature's are one record of doubles in one buffer, read and written whole with ``struct``,
    and the step over an example's records is written out for the number of classes
    (``_written_out``). Every number goes through the operations of the plain loop over lists,
    in its order, so the weights are the same to the bit (``test_linear_training.py`` holds
    ``train`` to that loop)."""
    width = len(classes)
    model = LinearModel(list(classes), [0.0] * width)
    bias, bias_squares = model.bias, [0.0] * width
    record = Struct(f"{2 * width}d")  # a feature's weights, then their sums of squares
    unpack, (summed, step) = record.unpack_from, _written_out(width, record.pack_into)
    where: dict[str, int] = {}  # each feature's record: its offset in ``packed``
    lessons = [  # each example: its features' places (as machine integers) and its class
        (array("q", [where.setdefault(name, len(where) * record.size) for name in names]), truth)
        for names, truth in examples
    ]
    packed = bytearray(record.size * len(where))
    twice = {i for i, (places, _) in enumerate(lessons) if len(set(places)) < len(places)}
    met: dict[int, None] = {}  # the records of the features met so far, in the order met
    order = list(range(len(examples)))
    shuffler = random.Random(seed)
    sqrt, exp, each = math.sqrt, math.exp, range(width)
    for epoch in range(epochs):
        shuffler.shuffle(order)
        for i in order:
            places, truth = lessons[i]
            rows = list(map(unpack, repeat(packed), places))
            seen = rows  # after the first epoch, every feature has been met
            if epoch == 0:  # a feature met for the first time weighs nothing yet
                seen = []
                for place, row in zip(places, rows, strict=True):
                    if place in met:
                        seen.append(row)
                    else:
                        met[place] = None
            logits = summed(bias, seen)  # the bias plus the rows, in the features' order
            top = max(logits)
            exps = [exp(x - top) for x in logits]
            total = sum(exps)
            errors = [e / total for e in exps]  # softmax, less 1 for the true class
            errors[truth] -= 1
            for k in each:  # the bias is not penalised
                grad = errors[k] + 0.0
                bias_squares[k] += grad * grad
                if bias_squares[k] > 0.0:
                    bias[k] -= rate * grad / sqrt(bias_squares[k])
            if i in twice:  # a feature named twice steps again from where its first step left it
                step(packed, places, map(unpack, repeat(packed), places), errors, l2, rate)
            else:
                step(packed, places, rows, errors, l2, rate)
    name_at = {place: name for name, place in where.items()}
    model.weights = {name_at[place]: list(unpack(packed, place)[:width]) for place in met}
    return model


Summer = Callable[[list[float], Iterable[tuple[Any, ...]]], list[float]]
Stepper = Callable[
    [bytearray, Iterable[int], Iterable[tuple[Any, ...]], list[float], float, float], None
]


def _written_out(width: int, pack_into: Callable[..., None]) -> tuple[Summer, Stepper]:
    """``logits(bias, rows)`` and ``step(packed, places, rows, errors, l2, rate)`` of ``train``,
    written out for ``width`` classes: one line an operation, on named locals, where a loop
    over the classes would spend more on its indexing than on the arithmetic.

    A row is a feature's record as ``struct`` reads it: its weights, then their sums of
    squares. ``logits`` adds the rows' weights to the bias, one row after another; ``step``
    takes the AdaGrad step on each row and writes it back to ``packed`` at its place. For two
    classes they read::

        def logits(bias, rows):
            [x0, x1] = bias
            for [w0, w1, s0, s1] in rows:
                x0 += w0
                x1 += w1
            return [x0, x1]

        def step(packed, places, rows, errors, l2, rate, sqrt=sqrt, pack_into=pack_into):
            [e0, e1] = errors
            for place, [w0, w1, s0, s1] in zip(places, rows):
                grad = e0 + l2 * w0
                s0 += grad * grad
                if s0 > 0.0:
                    w0 -= rate * grad / sqrt(s0)
                grad = e1 + l2 * w1
                s1 += grad * grad
                if s1 > 0.0:
                    w1 -= rate * grad / sqrt(s1)
                pack_into(packed, place, w0, w1, s0, s1)
    """

    def named(letter: str) -> list[str]:
        return [f"{letter}{k}" for k in range(width)]

    record = ", ".join(named("w") + named("s"))
    summed = [f"        x{k} += w{k}" for k in range(width)]
    stepped = [
        line
        for k in range(width)
        for line in (
            f"        grad = e{k} + l2 * w{k}",
            f"        s{k} += grad * grad",
            f"        if s{k} > 0.0:",
            f"            w{k} -= rate * grad / sqrt(s{k})",
        )
    ]
    source = [
        "def logits(bias, rows):",
        f"    [{', '.join(named('x'))}] = bias",
        f"    for [{record}] in rows:",
        *(summed or ["        pass"]),
        f"    return [{', '.join(named('x'))}]",
        "def step(packed, places, rows, errors, l2, rate, sqrt=sqrt, pack_into=pack_into):",
        f"    [{', '.join(named('e'))}] = errors",
        f"    for place, [{record}] in zip(places, rows):",
        *stepped,
        f"        pack_into(packed, place, {record})",
    ]
    namespace: dict[str, Any] = {"sqrt": math.sqrt, "pack_into": pack_into}
    exec("\n".join(source), namespace)  # built from ``width`` alone
    return namespace["logits"], namespace["step"]
