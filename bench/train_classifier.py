"""Train the embedded turn classifier from core/perception/training.jsonl (ours),
chat_training.jsonl (real written chat, bench/irc_chat.py) and human_training.jsonl (real
speech, bench/mrda.py) and write core/perception/weights.json. Deterministic: the same corpus
always gives the same file.

    python bench/train_classifier.py                    # retrain and write the weights
    python bench/train_classifier.py --folds 5          # also report cross-validated accuracy
    python bench/train_classifier.py --dev --weights 3,1,0 --dry-run   # try other weights

The held-out test splits (tests/data/chat_test.jsonl, human_test.jsonl, the odd lines of
utterances.jsonl) are never read here. ``--dev`` measures on what tuning may see: the two
calibration splits and the even lines of tests/data/utterances.jsonl."""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import Any

from core.perception.features import features
from core.perception.in_context import context_features
from core.perception.linear import LinearModel, softmax
from core.perception.model import CLASSES, WEIGHTS, fit, load_rows, training_rows
from core.runtime.conversations import contexts, training_set

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
GATE = 0.4  # (routing as the loop does; the gate itself is calibrated by classifier_accuracy)


def cross_validate(rows: list[dict[str, Any]], folds: int, **options: Any) -> float:
    """Accuracy over ``folds`` folds of whole conversations (rows grouped by topic, or by the
    meeting a real person's turn comes from), so no fold is tested on a conversation it was
    trained on."""
    groups = sorted({_group(row) for row in rows})
    fold_of = {group: n % folds for n, group in enumerate(groups)}
    right = 0
    for fold in range(folds):
        held = [row for row in rows if fold_of[_group(row)] == fold]
        kept = [row for row in rows if fold_of[_group(row)] != fold]
        model = fit(*training_set(kept), **options)
        for row, context in zip(held, contexts(held), strict=True):
            found = features(row["text"], row.get("topic")) + context_features(row["text"], context)
            scores = model.logits(found)
            right += CLASSES[scores.index(max(scores))] == row["act_type"]
    return right / len(rows)


def dev_report(model: LinearModel) -> None:
    """Accuracy and false commits, routed, on the splits tuning may look at."""
    dev = {
        "written chat, calibration": load_rows(DATA / "chat_calibration.jsonl"),
        "MRDA, calibration": load_rows(DATA / "human_calibration.jsonl"),
        "ours, even lines": load_rows(DATA / "utterances.jsonl")[::2],
    }
    commit = CLASSES.index("commit")
    for name, rows in dev.items():
        right = false = others = 0
        for row in rows:
            probs = softmax(model.logits(features(row["text"], row.get("topic"))))
            best = max(range(len(CLASSES)), key=lambda k: (probs[k], -k))
            said = CLASSES[best] if probs[best] >= GATE else "question"
            right += said == row["act_type"]
            if row["act_type"] != "commit":
                others += 1
                false += best == commit and said == "commit"
        print(f"{name}: {right / len(rows):.1%} ({len(rows)}), false-commit {false / others:.1%}")


def _group(row: dict[str, Any]) -> str:
    return str(row.get("source") or row.get("topic") or "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--folds", type=int, default=0, help="cross-validate first (0: skip)")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--l2", type=float, default=None)
    parser.add_argument("--rate", type=float, default=None)
    parser.add_argument("--dry-run", action="store_true", help="do not write the weights")
    parser.add_argument(
        "--weights",
        default=None,
        help="OURS,CHAT_EVERY,MRDA: ours and MRDA count this many times, chat one message in N",
    )
    parser.add_argument("--dev", action="store_true", help="measure on the tuning splits")
    args = parser.parse_args()
    options = {
        k: v
        for k, v in (("epochs", args.epochs), ("l2", args.l2), ("rate", args.rate))
        if v is not None
    }
    counts = [int(n) for n in args.weights.split(",")] if args.weights else []
    rows = training_rows(*counts)
    balance = Counter(row["act_type"] for row in rows)
    print(f"{len(rows)} training utterances: " + ", ".join(f"{c} {balance[c]}" for c in CLASSES))
    if args.folds:
        accuracy = cross_validate(rows, args.folds, **options)
        print(f"{args.folds}-fold cross-validated accuracy on the training corpus: {accuracy:.1%}")
    start = time.perf_counter()
    model = fit(*training_set(rows), **options)
    text = model.dumps()
    kept = len(model.to_json()["weights"])
    print(f"trained in {time.perf_counter() - start:.1f} s; {kept} features kept")
    if args.dev:
        dev_report(model)
    if not args.dry_run:
        WEIGHTS.write_text(text, encoding="utf-8")
        print(f"wrote {WEIGHTS} ({len(text.encode()) / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
