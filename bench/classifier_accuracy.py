"""Accuracy of the embedded turn classifier on the labelled evaluation corpus in tests/data/,
against a baseline measured in the same run (always answering the most common act type).

The classifier is a model trained on core/perception/training.jsonl (bench/train_classifier.py);
the evaluation corpus was never used for training and shares no turn with the training corpus.
The hand-written cues, and later additions to the training corpus, were guided only by the
errors on the even-numbered lines (dev); the odd-numbered lines (held out) were never looked at,
so the held-out figure is the honest one."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path

from core.deliberation.interpretation import ActType
from core.perception import EmbeddedClassifier
from core.perception.model import TRAINING, load_rows

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "utterances.jsonl"


def load(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _same_text(text: str) -> str:
    return " ".join(text.lower().split())


def training_note(rows: list[dict[str, str]]) -> str:
    training = load_rows(TRAINING)
    seen = {_same_text(row["text"]) for row in training}
    shared = sum(_same_text(row["text"]) in seen for row in rows)
    return (
        f"model trained on {len(training)} utterances ({TRAINING.name}); the evaluation corpus "
        f"was never used for training ({shared} identical turns shared)"
    )


def predict(rows: list[dict[str, str]]) -> tuple[list[str], list[float]]:
    """The act predicted for each row, and the time each took in microseconds."""
    classifier = EmbeddedClassifier()
    predicted, micros = [], []
    for row in rows:
        start = time.perf_counter_ns()
        predicted.append(classifier.classify(row["text"], row.get("topic")).act_type.value)
        micros.append((time.perf_counter_ns() - start) / 1000)
    return predicted, micros


def report(truth: list[str], predicted: list[str], splits: dict[str, list[int]]) -> None:
    majority = Counter(truth).most_common(1)[0][0]

    def accuracy(indices: list[int], guess: list[str]) -> float:
        return sum(guess[i] == truth[i] for i in indices) / len(indices)

    print(f"| split | embedded | baseline (always '{majority}') | ratio |")
    print("|---|---|---|---|")
    for name, idx in splits.items():
        ours, base = accuracy(idx, predicted), accuracy(idx, [majority] * len(truth))
        print(f"| {name} | **{ours:.1%}** | {base:.1%} | {ours / base:.1f}x |")
    print("\n| act type | precision | recall | n |")
    print("|---|---|---|---|")
    for act in ActType:
        said = [i for i, p in enumerate(predicted) if p == act.value]
        real = [i for i, t in enumerate(truth) if t == act.value]
        hits = sum(truth[i] == act.value for i in said)
        precision = hits / len(said) if said else 0.0
        print(f"| {act.value} | {precision:.0%} | {hits / len(real):.0%} | {len(real)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--errors", action="store_true", help="list the dev lines it gets wrong")
    args = parser.parse_args()
    rows = load(args.corpus)
    predicted, micros = predict(rows)
    truth = [row["act_type"] for row in rows]
    splits = {
        "all": list(range(len(rows))),
        "dev (even lines)": list(range(0, len(rows), 2)),
        "held out (odd lines)": list(range(1, len(rows), 2)),
    }
    print(f"{len(rows)} utterances; median classify time {statistics.median(micros):.0f} µs")
    print(training_note(rows) + "\n")
    report(truth, predicted, splits)
    if args.errors:  # the dev half only: the held-out half stays unseen
        print()
        for i in splits["dev (even lines)"]:
            if predicted[i] != truth[i]:
                print(f"{truth[i]:>10} -> {predicted[i]:<10} {rows[i]['text']!r}")


if __name__ == "__main__":
    main()
