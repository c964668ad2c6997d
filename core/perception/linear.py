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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import reduce
from operator import add
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
    oscillating. One loop with its names local: on the shipped corpus it makes some seventy
    million weight updates."""
    width = len(classes)
    model = LinearModel(list(classes), [0.0] * width)
    bias, bias_squares = model.bias, [0.0] * width
    rows: dict[str, tuple[list[float], list[float]]] = {}  # a feature's weights and squares
    order = list(range(len(examples)))
    shuffler = random.Random(seed)
    sqrt, exp, each = math.sqrt, math.exp, range(width)
    for _ in range(epochs):
        shuffler.shuffle(order)
        for i in order:
            names, truth = examples[i]
            logits = bias[:]  # the bias plus the weights of the features seen so far
            touched = []
            for name in names:
                pair = rows.get(name)
                if pair is None:  # weighs nothing yet
                    pair = rows[name] = (
                        model.weights.setdefault(name, [0.0] * width),
                        [0.0] * width,
                    )
                else:
                    row = pair[0]
                    for k in each:
                        logits[k] += row[k]
                touched.append(pair)
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
            for row, squares in touched:  # the L2 penalty on the weights an example touches
                for k in each:
                    grad = errors[k] + l2 * row[k]
                    squares[k] += grad * grad
                    if squares[k] > 0.0:
                        row[k] -= rate * grad / sqrt(squares[k])
    return model
