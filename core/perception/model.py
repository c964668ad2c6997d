"""The embedded classifier's model: built from ``training.jsonl``, saved as ``weights.json``.

Both files ship as package data next to this module. ``bench/train_classifier.py`` rebuilds
the weights; the evaluation corpus in ``tests/data/`` is never read here.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from core.deliberation.interpretation import ActType
from core.perception.features import features
from core.perception.linear import Example, LinearModel, train

__all__ = ["CLASSES", "TRAINING", "WEIGHTS", "fit", "load_rows", "weights"]

_HERE = Path(str(files("core.perception")))
TRAINING = _HERE / "training.jsonl"
WEIGHTS = _HERE / "weights.json"
CLASSES = [act.value for act in ActType]


def load_rows(path: Path = TRAINING) -> list[dict[str, Any]]:
    """Rows of ``{"text", "act_type", "topic"?}``, one JSON object a line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def fit(rows: list[dict[str, Any]], **options: Any) -> LinearModel:
    """Train on labelled rows; ``options`` go to ``linear.train`` (epochs, rate, l2, seed)."""
    examples: list[Example] = [
        (features(row["text"], row.get("topic")), CLASSES.index(row["act_type"])) for row in rows
    ]
    return train(examples, CLASSES, **options)


@cache
def weights() -> LinearModel:
    """The shipped model, read once on first use."""
    model = LinearModel.from_json(json.loads(WEIGHTS.read_text(encoding="utf-8")))
    if model.classes != CLASSES:
        raise ValueError(f"{WEIGHTS.name} was trained for {model.classes}, not {CLASSES}")
    return model
