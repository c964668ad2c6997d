"""The embedded classifier's model: built from ``training.jsonl`` (turns written for
training), ``context_training.jsonl`` (ours too, each after the messages it answers),
``chat_training.jsonl`` (real people's written chat, from public IRC channels, CC BY
4.0: see ``bench/irc_chat.py``) and ``human_training.jsonl`` (real people's speech, from the ICSI
MRDA meetings, CC BY 4.0: see ``bench/mrda.py``), saved as ``weights.json``.

All of them ship as package data next to this module. ``bench/train_classifier.py`` rebuilds
the weights; the evaluation corpora in ``tests/data/`` are never read here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from core.deliberation.interpretation import ActType
from core.deliberation.recent import TurnContext
from core.perception.features import features
from core.perception.in_context import context_features
from core.perception.linear import Example, LinearModel, train

__all__ = [
    "CHAT_TRAINING",
    "CLASSES",
    "CONTEXT_TRAINING",
    "HUMAN_TRAINING",
    "MEETING_TRAINING",
    "TRAINING",
    "WEIGHTS",
    "fit",
    "load_rows",
    "training_rows",
    "weights",
]

# How much each training file counts: ours (written for training: the product's phrasing, and
# refine, which real turns seldom carry) this many times; real written chat (what the bot
# reads) one message in CHAT_EVERY; real speech (MRDA) this many times. Chosen on the
# written-chat calibration split and the dev half of tests/data/utterances.jsonl, never on a
# test split. Their conventions differ (a bare "ok" acknowledges in real chat; a suggestion
# ending in "?" is an idea in ours): every chat message reads written chat ~3 points better
# than one in two. Speech (spoken meetings, no punctuation) costs written chat 3 to 5 points
# and is left out. With 8,493 chat messages, ours needs its 1,000 turns in chat register
# (refinements and commits that read like questions or hedges most) and a count of 8 to hold
# its dev half (89.4%; 10: 90.0%, the same on chat); a weaker penalty suits the larger corpus.
# (bench/train_classifier.py --dev --weights OURS,CHAT_EVERY,MRDA)
OURS_WEIGHT, CHAT_EVERY, MRDA_WEIGHT = 8, 1, 0
# the meetings count twice (chosen on tests/data/meeting_dev.jsonl and the written-chat
# calibration split, read in context: once 76.3% and 75.7%, twice 78.9% and 74.7%, four
# times 76.8% and 75.0%)
MEETING_WEIGHT = 2
L2 = 3e-5  # the penalty on weights (linear.train): a larger corpus wants less of it

_HERE = Path(str(files("core.perception")))
TRAINING = _HERE / "training.jsonl"
CHAT_TRAINING = _HERE / "chat_training.jsonl"
HUMAN_TRAINING = _HERE / "human_training.jsonl"
# ours too, each turn after the messages it answers ("before"): "yes" after a proposal,
# after a factual question, after information (core.runtime.conversations reads them)
CONTEXT_TRAINING = _HERE / "context_training.jsonl"
# real people deciding together: IRC meetings of two open-source projects, each whole and in
# order, with who wrote each (BSD 3-Clause and CC BY-SA 4.0: see bench/meeting_chat.py)
MEETING_TRAINING = _HERE / "meeting_training.jsonl"
WEIGHTS = _HERE / "weights.json"
CLASSES = [act.value for act in ActType]


def load_rows(*paths: Path) -> list[dict[str, Any]]:
    """Rows of ``{"text", "act_type", "topic"?, "source"?}``, one JSON object a line, of
    ``paths`` (default: every training file)."""
    rows = []
    for path in paths or (
        TRAINING,
        CONTEXT_TRAINING,
        CHAT_TRAINING,
        MEETING_TRAINING,
        HUMAN_TRAINING,
    ):
        lines = path.read_text(encoding="utf-8").splitlines()
        rows += [json.loads(line) for line in lines if line.strip()]
    return rows


def training_rows(
    ours: int = OURS_WEIGHT, chat_every: int = CHAT_EVERY, mrda: int = MRDA_WEIGHT
) -> list[dict[str, Any]]:
    """What the shipped weights are trained on: each file as much as it counts."""
    return (
        load_rows(TRAINING) * ours
        + load_rows(CONTEXT_TRAINING) * ours
        + load_rows(CHAT_TRAINING)[::chat_every]
        + load_rows(MEETING_TRAINING) * MEETING_WEIGHT
        + load_rows(HUMAN_TRAINING) * mrda
    )


def fit(
    rows: Sequence[dict[str, Any]],
    contexts: Sequence[TurnContext | None] | None = None,
    **options: Any,
) -> LinearModel:
    """Train on labelled rows, each read in its context (``contexts``, one a row, None for a
    row read alone: ``core.runtime.conversations.contexts`` builds them); ``options`` go to
    ``linear.train`` (epochs, rate, l2, seed)."""
    featured: dict[tuple[str, str | None], list[str]] = {}  # a turn that counts 8 times: once
    examples: list[Example] = []
    for row, context in zip(rows, contexts or [None] * len(rows), strict=True):
        key = (row["text"], row.get("topic"))
        if key not in featured:
            featured[key] = features(*key)
        found = featured[key] + context_features(row["text"], context)
        examples.append((found, CLASSES.index(row["act_type"])))
    return train(examples, CLASSES, **{"l2": L2, **options})


@cache
def weights() -> LinearModel:
    """The shipped model, read once on first use."""
    model = LinearModel.from_json(json.loads(WEIGHTS.read_text(encoding="utf-8")))
    if model.classes != CLASSES:
        raise ValueError(f"{WEIGHTS.name} was trained for {model.classes}, not {CLASSES}")
    return model
