"""``deliberate classify [TEXT] [--topic T] [--jsonl] [--eval FILE]``: the TurnInterpretation
of a turn, from the model when ``OPENAI_API_KEY`` is set (falling back to the embedded
classifier on any failure), else from the embedded classifier alone; or, with ``--eval``, how
well it reads a labelled file. Never touches state."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.cli import SUMMARIES
from bot.cli.render import json_line
from core.config.core_config import CoreConfig
from core.deliberation.interpretation import ActType
from core.perception import EmbeddedClassifier
from core.perception.evaluation import evaluate, table

if TYPE_CHECKING:
    from core.perception.llm import LLMClassifier

__all__ = ["register"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    classify = commands.add_parser(
        "classify",
        help=SUMMARIES["classify"],
        description="Print the interpretation of TEXT as JSON: act type, target, confidence, "
        "and the act the loop would route it as (a question below perception.min_confidence). "
        "With OPENAI_API_KEY set the model classifies (OPENAI_BASE_URL, DELIBERATE_MODEL), and "
        "any failure falls back to the embedded classifier. "
        'With --jsonl, read {"text": ..., "topic": ...} objects from stdin, one per line, and '
        "print one result per line; a bad line is reported on stderr and skipped. "
        'With --eval FILE.jsonl ({"text", "act_type", "topic"?} per line), classify every '
        "line and print accuracy, precision and recall per act, the confusion matrix and the "
        "false-commit rate, of the acts as routed (below min_confidence: a question).",
    )
    classify.add_argument("text", nargs="?", help="the turn to classify")
    classify.add_argument("--topic", help="what the session is deliberating")
    classify.add_argument("--jsonl", action="store_true", help="read JSON lines from stdin")
    classify.add_argument(
        "--eval", type=Path, metavar="FILE", help="measure on a labelled JSON-lines file"
    )
    classify.set_defaults(handler=_classify, offline=True)


def _classify(config: CoreConfig, args: argparse.Namespace) -> int:
    if [args.jsonl, args.text is not None, args.eval is not None].count(True) != 1:
        print("deliberate classify: give one of TEXT, --jsonl or --eval FILE", file=sys.stderr)
        return 2
    classifier = _classifier()
    threshold = config.perception.min_confidence
    if args.eval is not None:
        return _evaluate(classifier, threshold, args.eval)
    if args.text is not None:
        print(json_line(_result(classifier, threshold, args.text, args.topic)))
        return 0
    bad = 0
    for number, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            _, text, topic = _turn(line)
        except (ValueError, KeyError, TypeError) as exc:
            bad += 1
            print(f"deliberate classify: stdin line {number}: {_problem(exc)}", file=sys.stderr)
            continue
        print(json_line(_result(classifier, threshold, text, topic)), flush=True)
    return 2 if bad else 0


def _evaluate(classifier: LLMClassifier | EmbeddedClassifier, threshold: float, path: Path) -> int:
    """Every labelled line classified and routed; a line that cannot be read is named (file
    and line) and left out, and the exit code says some were."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        print(f"deliberate classify: {path}: {exc}", file=sys.stderr)
        return 2
    truth: list[ActType] = []
    predicted: list[ActType] = []
    readers: Counter[str] = Counter()
    bad = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item, text, topic = _turn(line)
            label = ActType(item["act_type"])
        except (ValueError, KeyError, TypeError) as exc:
            bad += 1
            print(f"deliberate classify: {path}:{number}: {_labelled(exc)}", file=sys.stderr)
            continue
        turn, reader = classifier.interpret(text, topic)
        readers[reader] += 1
        truth.append(label)
        predicted.append(turn.routed(threshold))
    if not truth:
        print(f"deliberate classify: {path}: no labelled line to measure on", file=sys.stderr)
        return 2
    name = "the model" if not isinstance(classifier, EmbeddedClassifier) else "embedded"
    print(f"{path}: {name} classifier, routed with min_confidence {threshold}")
    print("\n".join(table(evaluate(truth, predicted))))
    if not isinstance(classifier, EmbeddedClassifier):
        fell_back = readers[classifier.fallback.name]
        print(
            f"\nthe model read {readers[classifier.name]} turn(s); {fell_back} fell back to the "
            "embedded classifier (the model failed or answered out of schema: see stderr)"
        )
    if bad:
        print(f"deliberate classify: {bad} line(s) of {path} left out", file=sys.stderr)
    return 2 if bad else 0


def _turn(line: str) -> tuple[dict[str, Any], str, str | None]:
    """A line's JSON object, its text and its topic (ValueError, KeyError or TypeError when
    it is not one, or they are not strings)."""
    try:
        item = json.loads(line)
    except RecursionError:
        raise TypeError("not JSON this reads: it nests too deeply") from None
    if not isinstance(item, dict):
        raise TypeError("not a JSON object")
    text, topic = item["text"], item.get("topic")
    if not isinstance(text, str) or not (topic is None or isinstance(topic, str)):
        raise TypeError("text and topic must be strings")
    return item, text, topic


def _labelled(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"no {exc} field"
    if isinstance(exc, ValueError) and not isinstance(exc, json.JSONDecodeError):
        acts = ", ".join(a.value for a in ActType)
        return f"act_type must be one of {acts}"
    return _problem(exc)


def _classifier() -> LLMClassifier | EmbeddedClassifier:
    if not os.environ.get("OPENAI_API_KEY"):
        return EmbeddedClassifier()  # offline: no need to load the model client at all
    from core.llm.chat import chat_model_from_env
    from core.perception.llm import LLMClassifier

    model = chat_model_from_env()
    return LLMClassifier(model, EmbeddedClassifier()) if model else EmbeddedClassifier()


def _result(
    classifier: LLMClassifier | EmbeddedClassifier,
    threshold: float,
    text: str,
    topic: str | None,
) -> dict[str, Any]:
    turn, source = classifier.interpret(text, topic)
    return turn.model_dump(mode="json") | {
        "routed_as": turn.routed(threshold).value,
        "classifier": source,
        "text": text,
    }


def _problem(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return 'no "text" field'
    return str(exc) if isinstance(exc, TypeError) else f"not JSON ({exc})"
