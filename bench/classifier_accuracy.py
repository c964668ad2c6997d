"""Accuracy of the embedded turn classifier on the labelled corpus in tests/data/, against a
baseline measured in the same run (always answering the most common act type).

The corpus was written separately from the classifier's cues. Cues were tuned looking only at
the even-numbered lines (dev); the odd-numbered lines (held out) were not looked at."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path

from core.interpretation import ActType
from core.perception import EmbeddedClassifier

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "utterances.jsonl"


def load(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--errors", action="store_true", help="list the dev lines it gets wrong")
    args = parser.parse_args()
    rows = load(args.corpus)
    classifier = EmbeddedClassifier()
    predicted, micros = [], []
    for row in rows:
        start = time.perf_counter_ns()
        predicted.append(classifier.classify(row["text"], row.get("topic")).act_type.value)
        micros.append((time.perf_counter_ns() - start) / 1000)
    truth = [row["act_type"] for row in rows]
    majority = Counter(truth).most_common(1)[0][0]

    def accuracy(indices: list[int], guess: list[str]) -> float:
        return sum(guess[i] == truth[i] for i in indices) / len(indices)

    splits = {
        "all": list(range(len(rows))),
        "dev (even lines)": list(range(0, len(rows), 2)),
        "held out (odd lines)": list(range(1, len(rows), 2)),
    }
    print(f"{len(rows)} utterances; median classify time {statistics.median(micros):.0f} µs\n")
    print(f"| split | embedded | baseline (always '{majority}') | ratio |")
    print("|---|---|---|---|")
    for name, idx in splits.items():
        ours, base = accuracy(idx, predicted), accuracy(idx, [majority] * len(rows))
        print(f"| {name} | **{ours:.1%}** | {base:.1%} | {ours / base:.1f}x |")
    print("\n| act type | precision | recall | n |")
    print("|---|---|---|---|")
    for act in ActType:
        said = [i for i, p in enumerate(predicted) if p == act.value]
        real = [i for i, t in enumerate(truth) if t == act.value]
        hits = sum(truth[i] == act.value for i in said)
        precision = hits / len(said) if said else 0.0
        print(f"| {act.value} | {precision:.0%} | {hits / len(real):.0%} | {len(real)} |")
    if args.errors:
        print()
        for i in splits["dev (even lines)"]:
            if predicted[i] != truth[i]:
                print(f"{truth[i]:>10} -> {predicted[i]:<10} {rows[i]['text']!r}")


if __name__ == "__main__":
    main()
