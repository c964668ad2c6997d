"""The embedded classifier's model: built from ``training.jsonl`` (turns written for
training) and ``human_training.jsonl`` (real people's, from the ICSI MRDA meetings, CC BY 4.0:
see ``bench/mrda.py``), saved as ``weights.json``.

All three ship as package data next to this module. ``bench/train_classifier.py`` rebuilds
the weights; the evaluation corpora in ``tests/data/`` are never read here.
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

__all__ = [
    "CLASSES",
    "HUMAN_TRAINING",
    "TRAINING",
    "WEIGHTS",
    "fit",
    "load_rows",
    "training_rows",
    "weights",
]

# the turns written for training count this many times against the human ones (500 of each
# act MRDA carries): enough to keep chat's phrasing (and refine, which MRDA lacks) while
# learning people's; chosen on the calibration split and the dev half of
# tests/data/utterances.jsonl, never on a test split
OURS_WEIGHT = 3

_HERE = Path(str(files("core.perception")))
TRAINING = _HERE / "training.jsonl"
HUMAN_TRAINING = _HERE / "human_training.jsonl"
WEIGHTS = _HERE / "weights.json"
CLASSES = [act.value for act in ActType]


def load_rows(*paths: Path) -> list[dict[str, Any]]:
    """Rows of ``{"text", "act_type", "topic"?, "source"?}``, one JSON object a line, of
    ``paths`` (default: every training file)."""
    rows = []
    for path in paths or (TRAINING, HUMAN_TRAINING):
        lines = path.read_text(encoding="utf-8").splitlines()
        rows += [json.loads(line) for line in lines if line.strip()]
    return rows


def training_rows() -> list[dict[str, Any]]:
    """What the shipped weights are trained on: ours, weighted, and the human turns."""
    return load_rows(TRAINING) * OURS_WEIGHT + load_rows(HUMAN_TRAINING)


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
