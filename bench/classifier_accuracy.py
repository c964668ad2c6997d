"""Accuracy of the embedded turn classifier on real people's turns and on ours, against the
six-line regular-expression baseline (``core/perception/evaluation.py``), in one run.

- Real people: ``tests/data/human_test.jsonl``, utterances of ICSI MRDA meetings that no
  training or tuning ever saw (other meetings than the training and calibration splits;
  ``bench/mrda.py`` says how they are chosen and mapped; CC BY 4.0).
- Ours: ``tests/data/utterances.jsonl``, written for this project and never trained on;
  its odd lines were never looked at while writing cues or training turns (held out).

Reported for each: accuracy, precision and recall per act, the confusion matrix, and the
false-commit rate, of the acts as the loop routes them (below ``min_confidence``: a
question), then the baseline's; and the classifier's median time per turn."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from core.config.core_config import load_config
from core.deliberation.interpretation import ActType
from core.perception import EmbeddedClassifier
from core.perception.evaluation import Scores, evaluate, regex_baseline, table
from core.perception.model import load_rows

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
CORPORA = {
    "real people (MRDA meetings, held out)": DATA / "human_test.jsonl",
    "ours (tests/data/utterances.jsonl)": DATA / "utterances.jsonl",
}


def load(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _same_text(text: str) -> str:
    return " ".join(text.lower().split())


def shared_with_training(rows: list[dict[str, str]]) -> int:
    seen = {_same_text(row["text"]) for row in load_rows()}
    return sum(_same_text(row["text"]) in seen for row in rows)


def measure(rows: list[dict[str, str]], gate: float) -> tuple[Scores, Scores, list[float]]:
    """The classifier's routed acts and the baseline's, scored; and µs per turn."""
    classifier = EmbeddedClassifier()
    truth = [ActType(row["act_type"]) for row in rows]
    ours, micros = [], []
    for row in rows:
        start = time.perf_counter_ns()
        turn = classifier.classify(row["text"], row.get("topic"))
        micros.append((time.perf_counter_ns() - start) / 1000)
        ours.append(turn.routed(gate))
    baseline = [regex_baseline(row["text"]) for row in rows]
    return evaluate(truth, ours), evaluate(truth, baseline), micros


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--details", action="store_true", help="per-act tables too")
    args = parser.parse_args()
    gate = load_config(None).perception.min_confidence
    print(f"embedded classifier, routed with min_confidence {gate}; baseline: six regexes\n")
    print("| turns | n | embedded | baseline | gain | false-commit: embedded | baseline |")
    print("|---|---|---|---|---|---|---|")
    details, times = [], []
    for name, path in CORPORA.items():
        rows = load(path)
        splits = {name: rows}
        if path.name == "utterances.jsonl":
            splits[f"{name}, held out (odd lines)"] = rows[1::2]
        for label, part in splits.items():
            ours, base, micros = measure(part, gate)
            times += micros
            print(
                f"| {label} | {ours.n} | **{ours.accuracy:.1%}** | {base.accuracy:.1%} | "
                f"{(ours.accuracy - base.accuracy) * 100:+.1f} pts | "
                f"**{ours.false_commit_rate:.1%}** | {base.false_commit_rate:.1%} |"
            )
            details.append((label, ours, base))
        print(f"|  ({shared_with_training(rows)} of these turns appear in training) |||||||")
    print(f"\nmedian classify time {statistics.median(times):.0f} µs per turn")
    if args.details:
        for label, ours, base in details:
            print(f"\n### {label}: embedded\n")
            print("\n".join(table(ours)))
            print(f"\n### {label}: baseline\n")
            print("\n".join(table(base)))


if __name__ == "__main__":
    main()
