"""Accuracy of the turn classifier on real people's turns and on ours, against the six-line
regular-expression baseline (``core/perception/evaluation.py``), in one run; and the
calibration of ``perception.min_confidence``.

- Real people deciding together: ``tests/data/meeting_test.jsonl``, 2,766 messages of
  fourteen IRC meetings of Monero and I2P that no message trains (``bench/meeting_chat.py``;
  BSD 3-Clause and CC BY-SA 4.0). Each conversation is also read in context ("in context"):
  every message after the ones before it in its log, run through a scratch session of the
  bot's loop as the bot would run them (``core/runtime/conversations.py``), as the bot reads
  live turns.
- Real written chat: ``tests/data/chat_test.jsonl``, 700 messages of public IRC channels
  (Ubuntu's meetings, Rust, Stripe and MediaWiki developers) from logs no message of which
  trains (``bench/irc_chat.py`` says where from and how they were labelled; CC BY 4.0).
- Real speech: ``tests/data/human_test.jsonl``, utterances of ICSI MRDA meetings that no
  training or tuning ever saw (other meetings than the training and calibration splits;
  ``bench/mrda.py`` says how they are chosen and mapped; CC BY 4.0).
- Ours: ``tests/data/utterances.jsonl``, written for this project and never trained on;
  its odd lines were never looked at while writing cues or training turns (held out).
- Calibration: ``tests/data/chat_calibration.jsonl`` (real written chat again, other
  messages) and ``tests/data/meeting_dev.jsonl`` (two other meetings), read in context, set
  the gate (``core/perception/calibration.py``); the held-out splits only
  report what it costs.

Reported for each: accuracy, precision and recall per act (``--details``), the confusion
matrix, the false-commit and missed-commit rates, of the acts as the loop routes them
(below ``min_confidence``: a question), then the baseline's; and the median time per turn.

``--model`` measures the model classifier instead (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``,
``DELIBERATE_MODEL``, as the bot uses them), over the first ``--limit`` turns of each corpus;
a turn the model failed on is read by the embedded classifier, and the report counts them."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from core.config.core_config import load_config
from core.deliberation.interpretation import ActType
from core.perception import Classifier, EmbeddedClassifier
from core.perception.calibration import TARGET, calibrate, sweep
from core.perception.evaluation import Scores, evaluate, regex_baseline, table
from core.perception.model import load_rows
from core.runtime.conversations import contexts, conversation_of

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
CORPORA = {
    "real people deciding together (IRC meetings, held out)": DATA / "meeting_test.jsonl",
    "real written chat (IRC, held out)": DATA / "chat_test.jsonl",
    "real speech (MRDA meetings, held out)": DATA / "human_test.jsonl",
    "ours (tests/data/utterances.jsonl)": DATA / "utterances.jsonl",
}
CALIBRATION = [DATA / "chat_calibration.jsonl", DATA / "meeting_dev.jsonl"]


def load(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _same_text(text: str) -> str:
    return " ".join(text.lower().split())


def shared_with_training(rows: list[dict[str, str]]) -> int:
    seen = {_same_text(row["text"]) for row in load_rows()}
    return sum(_same_text(row["text"]) in seen for row in rows)


class Reading:
    """One classifier's readings of labelled turns: what it said, who said it (the model,
    or the embedded classifier it fell back to), and how long each took (µs)."""

    def __init__(
        self, classifier: Classifier, rows: list[dict[str, str]], *, in_context: bool = False
    ) -> None:
        self.truth = [ActType(row["act_type"]) for row in rows]
        self.turns, self.sources, self.micros = [], Counter[str](), []
        # each message after the ones before it in its log, read as the bot reads them
        read_in = contexts(rows, classifier) if in_context else [None] * len(rows)
        for row, context in zip(rows, read_in, strict=True):
            start = time.perf_counter_ns()
            turn, source = classifier.interpret(row["text"], row.get("topic"), context=context)
            self.micros.append((time.perf_counter_ns() - start) / 1000)
            self.turns.append(turn)
            self.sources[source] += 1
        self.baseline = evaluate(self.truth, [regex_baseline(row["text"]) for row in rows])

    def routed(self, gate: float) -> Scores:
        return evaluate(self.truth, [turn.routed(gate) for turn in self.turns])


def report_calibration(classifier: Classifier, gate: float) -> None:
    reading = Reading(classifier, [r for path in CALIBRATION for r in load(path)], in_context=True)
    points = sweep(reading.turns, reading.truth)
    chosen = calibrate(points)
    names = " and ".join(path.name for path in CALIBRATION)
    print(f"\n## Calibration ({names}, {len(reading.truth)} turns, in context)\n")
    print("| min_confidence | accuracy | false-commit | its 95% upper bound | missed commits |")
    print("|---|---|---|---|---|")
    for point in points:
        mark = " ←" if chosen is not None and point.gate == chosen.gate else ""
        scores = point.scores
        print(
            f"| {point.gate:.2f}{mark} | {scores.accuracy:.1%} | {scores.false_commit_rate:.1%} "
            f"| {point.false_commit_upper:.1%} | {scores.missed_commit_rate:.1%} |"
        )
    if chosen is None:
        print(f"\nno gate keeps the false-commit upper bound within {TARGET:.0%}")
        return
    verdict = "the shipped default" if chosen.gate == gate else f"the config says {gate}: change it"
    print(
        f"\nlowest gate with the false-commit upper bound within {TARGET:.0%}: "
        f"**{chosen.gate:.2f}** ({verdict})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--details", action="store_true", help="per-act tables too")
    parser.add_argument("--model", action="store_true", help="measure the model classifier")
    parser.add_argument("--limit", type=int, default=0, help="only the first N turns of each")
    args = parser.parse_args()
    gate = load_config(None).perception.min_confidence
    classifier: Classifier = EmbeddedClassifier()
    if args.model:
        from core.llm.chat import chat_model_from_env
        from core.perception.llm import LLMClassifier

        model = chat_model_from_env()
        if model is None:
            sys.exit("classifier_accuracy --model: set OPENAI_API_KEY (and OPENAI_BASE_URL)")
        classifier = LLMClassifier(model, EmbeddedClassifier())
    print(
        f"{classifier.name} classifier, routed with min_confidence {gate}; baseline: six regexes\n"
    )
    print("| turns | n | accuracy | baseline | gain | false-commit | baseline | missed commits |")
    print("|---|---|---|---|---|---|---|---|")
    details, sources = [], Counter[str]()
    times: list[float] = []
    context_times: list[float] = []
    for name, path in CORPORA.items():
        rows = load(path)[: args.limit or None]
        splits = {name: rows}
        if path.name == "utterances.jsonl" and not args.limit:
            splits[f"{name}, held out (odd lines)"] = rows[1::2]
        if any(conversation_of(row) for row in rows):
            splits[f"{name}, in context"] = rows
        for label, part in splits.items():
            reading = Reading(classifier, part, in_context=label.endswith(", in context"))
            ours, base = reading.routed(gate), reading.baseline
            (context_times if label.endswith(", in context") else times).extend(reading.micros)
            sources += reading.sources
            print(
                f"| {label} | {ours.n} | **{ours.accuracy:.1%}** | {base.accuracy:.1%} | "
                f"{(ours.accuracy - base.accuracy) * 100:+.1f} pts | "
                f"**{ours.false_commit_rate:.1%}** | {base.false_commit_rate:.1%} | "
                f"{ours.missed_commit_rate:.1%} |"
            )
            details.append((label, ours, base))
        print(f"|  ({shared_with_training(rows)} of these turns appear in training) ||||||||")
    print(f"\nmedian classify time {statistics.median(times):.0f} µs per turn", end="")
    if context_times:
        print(f"; read in context {statistics.median(context_times):.0f} µs", end="")
    print()
    print("read by: " + ", ".join(f"{name} {n}" for name, n in sorted(sources.items())))
    if not args.model:
        report_calibration(classifier, gate)
    if args.details:
        for label, ours, base in details:
            print(f"\n### {label}: {classifier.name}\n")
            print("\n".join(table(ours)))
            print(f"\n### {label}: baseline\n")
            print("\n".join(table(base)))


if __name__ == "__main__":
    main()
