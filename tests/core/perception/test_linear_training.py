"""``linear.train`` (packed records, the step written out for the number of classes) comes out
exactly as the plain loop over lists of floats it replaced, kept here as the oracle: the same
weights to the bit, the same features in the same order, on random small example sets whose
feature names repeat within and across examples (Hypothesis), and where a weight's gradient is
still exactly zero (the guard on its sum of squares)."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from core.perception.linear import Example, LinearModel, train

CLASSES = ["a", "b", "c", "d", "e"]


def plain_train(
    examples: Sequence[Example],
    classes: Sequence[str],
    *,
    epochs: int = 20,
    rate: float = 0.1,
    l2: float = 1e-3,
    seed: int = 0,
) -> LinearModel:
    """The training loop as it was before the records were packed (e7c8c72), unchanged."""
    width = len(classes)
    model = LinearModel(list(classes), [0.0] * width)
    bias, bias_squares = model.bias, [0.0] * width
    rows: dict[str, tuple[list[float], list[float]]] = {}
    order = list(range(len(examples)))
    shuffler = random.Random(seed)
    sqrt, exp, each = math.sqrt, math.exp, range(width)
    for _ in range(epochs):
        shuffler.shuffle(order)
        for i in order:
            names, truth = examples[i]
            logits = bias[:]
            touched = []
            for name in names:
                pair = rows.get(name)
                if pair is None:
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
            errors = [e / total for e in exps]
            errors[truth] -= 1
            for k in each:
                grad = errors[k] + 0.0
                bias_squares[k] += grad * grad
                if bias_squares[k] > 0.0:
                    bias[k] -= rate * grad / sqrt(bias_squares[k])
            for row, squares in touched:
                for k in each:
                    grad = errors[k] + l2 * row[k]
                    squares[k] += grad * grad
                    if squares[k] > 0.0:
                        row[k] -= rate * grad / sqrt(squares[k])
    return model


def bits(model: LinearModel) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """Every number as its exact bits (``float.hex``: -0.0 is not 0.0), features in order."""
    return (
        [w.hex() for w in model.bias],
        [(name, [w.hex() for w in row]) for name, row in model.weights.items()],
    )


@st.composite
def example_sets(draw: st.DrawFn) -> tuple[list[Example], list[str]]:
    classes = CLASSES[: draw(st.integers(1, 5))]
    names = st.sampled_from(["x", "y", "z", "w:ok", "b:<s> ok"])  # few: they repeat
    example = st.tuples(st.lists(names, max_size=6), st.integers(0, len(classes) - 1))
    return draw(st.lists(example, max_size=12)), classes


@settings(max_examples=300)
@given(
    data=example_sets(),
    epochs=st.integers(1, 3),
    rate=st.sampled_from([0.1, 0.5, 2.0, 40.0]),
    l2=st.sampled_from([0.0, 3e-5, 1e-3, 0.3]),
    seed=st.integers(0, 2**32 - 1),
)
def test_training_gives_the_plain_loops_weights_to_the_bit(
    data: tuple[list[Example], list[str]], epochs: int, rate: float, l2: float, seed: int
) -> None:
    examples, classes = data
    ours = train(examples, classes, epochs=epochs, rate=rate, l2=l2, seed=seed)
    plain = plain_train(examples, classes, epochs=epochs, rate=rate, l2=l2, seed=seed)
    assert ours.classes == plain.classes
    assert ours.bias == plain.bias and ours.weights == plain.weights
    assert bits(ours) == bits(plain)


def test_a_weight_whose_gradient_is_still_zero_does_not_step() -> None:
    """A feature first met in an example its class already wins outright (the softmax says
    1.0, so its error is exactly 0) keeps a zero sum of squares there and does not move."""
    examples: list[Example] = [(["x"], 0) for _ in range(30)]
    examples.append((["x", "fresh"], 0))  # the shuffle (seed 0) puts it eighth
    ours = train(examples, CLASSES[:2], epochs=1, rate=40.0, l2=0.0)
    plain = plain_train(examples, CLASSES[:2], epochs=1, rate=40.0, l2=0.0)
    assert bits(ours) == bits(plain)
    assert ours.weights["fresh"][0] == 0.0  # the guard held it: no step, no 0/0
    assert ours.weights["fresh"][1] != 0.0  # the other class's error was not zero


def test_a_feature_named_twice_steps_twice_from_where_its_first_step_left_it() -> None:
    examples: list[Example] = [(["x", "x", "y"], 1), (["y", "x", "y"], 0), (["x"], 2)]
    ours = train(examples, CLASSES[:3], epochs=3, rate=0.5, seed=7)
    assert bits(ours) == bits(plain_train(examples, CLASSES[:3], epochs=3, rate=0.5, seed=7))
    once = train([(["x", "y"], 1), (["y", "x"], 0), (["x"], 2)], CLASSES[:3], epochs=3, seed=7)
    assert once.weights["x"] != ours.weights["x"]
