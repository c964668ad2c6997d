"""Train the embedded turn classifier from core/perception/training.jsonl and
human_training.jsonl (bench/mrda.py) and write core/perception/weights.json. Deterministic:
the same corpus always gives the same file.

    python bench/train_classifier.py            # retrain and write the weights
    python bench/train_classifier.py --folds 5  # also report cross-validated accuracy

Only the training corpus is read. The evaluation corpus (tests/data/utterances.jsonl) is never
used here, not even to choose the training options: --folds measures them on the training
corpus itself."""

from __future__ import annotations

import argparse
import time
from collections import Counter
from typing import Any

from core.perception.features import features
from core.perception.model import CLASSES, WEIGHTS, fit, training_rows


def cross_validate(rows: list[dict[str, Any]], folds: int, **options: Any) -> float:
    """Accuracy over ``folds`` folds of whole conversations (rows grouped by topic, or by the
    meeting a real person's turn comes from), so no fold is tested on a conversation it was
    trained on."""
    groups = sorted({_group(row) for row in rows})
    fold_of = {group: n % folds for n, group in enumerate(groups)}
    right = 0
    for fold in range(folds):
        held = [row for row in rows if fold_of[_group(row)] == fold]
        model = fit([row for row in rows if fold_of[_group(row)] != fold], **options)
        for row in held:
            scores = model.logits(features(row["text"], row.get("topic")))
            right += CLASSES[scores.index(max(scores))] == row["act_type"]
    return right / len(rows)


def _group(row: dict[str, Any]) -> str:
    return str(row.get("source") or row.get("topic") or "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--folds", type=int, default=0, help="cross-validate first (0: skip)")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--l2", type=float, default=None)
    parser.add_argument("--rate", type=float, default=None)
    parser.add_argument("--dry-run", action="store_true", help="do not write the weights")
    args = parser.parse_args()
    options = {
        k: v
        for k, v in (("epochs", args.epochs), ("l2", args.l2), ("rate", args.rate))
        if v is not None
    }
    rows = training_rows()
    balance = Counter(row["act_type"] for row in rows)
    print(f"{len(rows)} training utterances: " + ", ".join(f"{c} {balance[c]}" for c in CLASSES))
    if args.folds:
        accuracy = cross_validate(rows, args.folds, **options)
        print(f"{args.folds}-fold cross-validated accuracy on the training corpus: {accuracy:.1%}")
    start = time.perf_counter()
    model = fit(rows, **options)
    text = model.dumps()
    kept = len(model.to_json()["weights"])
    print(f"trained in {time.perf_counter() - start:.1f} s; {kept} features kept")
    if not args.dry_run:
        WEIGHTS.write_text(text, encoding="utf-8")
        print(f"wrote {WEIGHTS} ({len(text.encode()) / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
