"""``deliberate classify [TEXT] [--topic T] [--jsonl] [--eval FILE]``: the TurnInterpretation
of a turn, from the model when ``OPENAI_API_KEY`` is set (falling back to the embedded
classifier on any failure), else from the embedded classifier alone; or, with ``--eval``, how
well it reads a labelled file. A JSON line's ``before`` (earlier messages of its
conversation) runs through a scratch session of the bot's own loop first, so the turn is read
in the context the bot would read it in. Never touches state: no Redis at all.

``deliberate perception status|reset``: the workspace's own perception weights, which its
team's clicks teach (``core/perception/team.py``): whether they are on, how much they have
learned and when, and clearing them."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.commands import SUMMARIES
from bot.commands.args import actor
from bot.reports.render import json_line
from core.config.core_config import CoreConfig
from core.deliberation.interpretation import ActType, TurnInterpretation
from core.deliberation.update.settings import LoopSettings
from core.perception import EmbeddedClassifier
from core.perception.evaluation import evaluate, table
from core.perception.team import BOUND, HALF_LIFE_DAYS, RATE, TeamWeights
from core.runtime.conversations import MAX_BEFORE, context_after
from core.runtime.team_weights import TeamStore, parsed
from core.state.scripts import server_ms

if TYPE_CHECKING:
    from bot.app import App
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
        'A line may give "who" (the writer of text) and "before": [{"who": ..., "text": ...}, '
        f"...] (up to {MAX_BEFORE} earlier messages of the same conversation, oldest first): "
        "they run through the bot's own loop in a scratch session (in memory: nothing is "
        "written anywhere), and text is read in the context the bot would read it in (the "
        "acts and writers of the last turns, the idea on the table, what text repeats of "
        "them). An act_type given to an earlier message is not read: they are read as the bot "
        "reads them. Without before, text is read alone. "
        'With --eval FILE.jsonl ({"text", "act_type", "topic"?, "who"?, "before"?} per line), '
        "classify every line and print accuracy, precision and recall per act, the confusion "
        "matrix and the false-commit rate, of the acts as routed (below min_confidence: a "
        "question).",
    )
    classify.add_argument("text", nargs="?", help="the turn to classify")
    classify.add_argument("--topic", help="what the session is deliberating")
    classify.add_argument("--jsonl", action="store_true", help="read JSON lines from stdin")
    classify.add_argument(
        "--eval", type=Path, metavar="FILE", help="measure on a labelled JSON-lines file"
    )
    classify.set_defaults(handler=_classify, offline=True)
    _register_perception(commands)


def _classify(config: CoreConfig, args: argparse.Namespace) -> int:
    if [args.jsonl, args.text is not None, args.eval is not None].count(True) != 1:
        print("deliberate classify: give one of TEXT, --jsonl or --eval FILE", file=sys.stderr)
        return 2
    classifier = _classifier()
    reading = Reading(classifier, config.loop_settings(), config.perception.min_confidence)
    if args.eval is not None:
        return _evaluate(reading, args.eval)
    if args.text is not None:
        print(json_line(_result(reading, {"text": args.text, "topic": args.topic})))
        return 0
    bad = 0
    for number, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            item = _turn(line)
            said = _result(reading, item)
        except (ValueError, KeyError, TypeError) as exc:
            bad += 1
            print(f"deliberate classify: stdin line {number}: {_problem(exc)}", file=sys.stderr)
            continue
        print(json_line(said), flush=True)
    return 2 if bad else 0


@dataclass(frozen=True)
class Reading:
    """How a line is read: by ``classifier``, after its ``before`` in a scratch session of
    the loop configured by ``settings``, routed at ``threshold``."""

    classifier: LLMClassifier | EmbeddedClassifier
    settings: LoopSettings
    threshold: float

    def interpret(self, item: dict[str, Any]) -> tuple[TurnInterpretation, str]:
        """How ``item`` (a checked line) reads, and by whom (TypeError, ValueError: its
        ``before`` is not what it must be)."""
        context = None
        if "before" in item:  # (an empty list: nothing came before)
            context = context_after(item, self.settings, self.classifier)
        return self.classifier.interpret(item["text"], item.get("topic"), context=context)


def _evaluate(reading: Reading, path: Path) -> int:
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
            item = _turn(line)
            label = _label(item)
            turn, reader = reading.interpret(item)
        except (ValueError, KeyError, TypeError) as exc:
            bad += 1
            print(f"deliberate classify: {path}:{number}: {_labelled(exc)}", file=sys.stderr)
            continue
        readers[reader] += 1
        truth.append(label)
        predicted.append(turn.routed(reading.threshold))
    if not truth:
        print(f"deliberate classify: {path}: no labelled line to measure on", file=sys.stderr)
        return 2
    classifier = reading.classifier
    name = "the model" if not isinstance(classifier, EmbeddedClassifier) else "embedded"
    print(f"{path}: {name} classifier, routed with min_confidence {reading.threshold}")
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


def _turn(line: str) -> dict[str, Any]:
    """A line's JSON object (ValueError, KeyError or TypeError when it is not one, or its
    text, topic and who are not strings)."""
    try:
        item = json.loads(line)
    except RecursionError:
        raise TypeError("not JSON this reads: it nests too deeply") from None
    if not isinstance(item, dict):
        raise TypeError("not a JSON object")
    text = item["text"]
    if not isinstance(text, str) or any(
        not (item.get(field) is None or isinstance(item[field], str)) for field in ("topic", "who")
    ):
        raise TypeError("text, topic and who must be strings")
    return item


def _label(item: dict[str, Any]) -> ActType:
    """A labelled line's act (KeyError: none; TypeError: not an act)."""
    act = item["act_type"]
    if not isinstance(act, str) or act not in set(ActType):
        raise TypeError(f"act_type must be one of {', '.join(a.value for a in ActType)}")
    return ActType(act)


def _labelled(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"no {exc} field"
    return _problem(exc)


def _classifier() -> LLMClassifier | EmbeddedClassifier:
    if not os.environ.get("OPENAI_API_KEY"):
        return EmbeddedClassifier()  # offline: no need to load the model client at all
    from core.llm.chat import chat_model_from_env
    from core.perception.llm import LLMClassifier

    model = chat_model_from_env()
    return LLMClassifier(model, EmbeddedClassifier()) if model else EmbeddedClassifier()


def _result(reading: Reading, item: dict[str, Any]) -> dict[str, Any]:
    turn, source = reading.interpret(item)
    return turn.model_dump(mode="json") | {
        "routed_as": turn.routed(reading.threshold).value,
        "classifier": source,
        "text": item["text"],
    }


def _problem(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return 'no "text" field'
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON ({exc})"
    return str(exc)


UNREADABLE = (
    "Redis holds something here that is no table of weights (an older release's, or damaged): "
    "turns are read by the shipped model alone and no click teaches it until "
    "'deliberate perception reset' clears it."
)


def _register_perception(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    perception = commands.add_parser(
        "perception",
        help=SUMMARIES["perception"],
        description="The workspace's own perception weights. A click that says the bot "
        "misread the turn before it ('Use this' after a turn read as an idea, 'Try another "
        "angle' after one read as agreement) teaches that turn's hashed words and what it "
        f"read around it a small step ({RATE}, each weight within ±{BOUND}); the weights are "
        "added to the shipped model's when this workspace's turns are read, and halve every "
        f"{HALF_LIFE_DAYS} days. No other workspace reads them. 'perception.adapt: false' in "
        "the config turns them off.",
    )
    actions = perception.add_subparsers(dest="perception_command", required=True, metavar="WHAT")
    status = actions.add_parser(
        "status",
        help="whether the team's weights are on, how many clicks taught them and when",
        description="Whether the config lets clicks teach this workspace's weights, how many "
        "lessons they hold, when the last one was learned, and how far they reach.",
    )
    status.add_argument("--json", action="store_true", help="one JSON object")
    status.set_defaults(handler=_status)
    reset = actions.add_parser(
        "reset",
        help="forget what the team's clicks taught: the shipped model reads alone again",
        description="Clear this workspace's own weights (the trace keeps a line saying who "
        "did, when, and how many lessons were forgotten). The next click that says a turn "
        "was misread teaches them afresh, unless perception.adapt is false.",
    )
    reset.add_argument("--json", action="store_true", help="one JSON object")
    reset.add_argument(
        "--as",
        dest="actor",
        type=actor,
        metavar="KIND:ID",
        help="who resets, as the trace keeps it (default: cli:$USER)",
    )
    reset.set_defaults(handler=_reset)


def _status(app: App, args: argparse.Namespace) -> int:
    store = TeamStore(app.redis, app.store.workspace)
    now = server_ms(app.redis, store.key)
    held = parsed(store.read(app.redis))
    team = None if held is None else held.at(now)  # (as it has decayed by now)
    on = app.config.perception.adapt
    record = _record(app, on, team, now)
    if args.json:
        print(json_line(record))
        return 0
    workspace = app.store.workspace
    print(f"workspace {workspace}: team weights {'on' if on else 'off (perception.adapt: false)'}")
    if team is None:
        print(UNREADABLE)
        return 0
    if not team.lessons:
        print("no click has taught them yet: the shipped model reads alone")
        return 0
    print(_taught(team, now))
    return 0


def _reset(app: App, args: argparse.Namespace) -> int:
    store = TeamStore(app.redis, app.store.workspace)
    held, team = store.reset()
    lessons = 0 if team is None else team.lessons
    by = str(args.actor) if args.actor else f"cli:{os.environ.get('USER') or 'unknown'}"
    what: dict[str, Any] = {"lessons": lessons, "by": by, "unreadable": held and team is None}
    if held:  # (forgetting nothing changes nothing: no line)
        cid = f"perception-reset-{os.urandom(6).hex()}"
        app.trace.append(cid, "", "perception.reset", what)
    if args.json:
        print(json_line({"workspace": app.store.workspace, "held": held, **what}))
        return 0
    if not held:
        print(f"workspace {app.store.workspace}: no team weights to forget")
    elif team is None:
        print(f"workspace {app.store.workspace}: cleared what was no table of weights")
    else:
        print(
            f"workspace {app.store.workspace}: forgot {_lessons(lessons)}; the shipped "
            "model reads alone until a click teaches it again"
        )
    if not app.config.perception.adapt:
        print("(perception.adapt is false: no click teaches them)", file=sys.stderr)
    return 0


def _record(app: App, on: bool, team: TeamWeights | None, now: int) -> dict[str, Any]:
    record: dict[str, Any] = {"workspace": app.store.workspace, "adapt": on}
    if team is None:
        return {**record, "readable": False}
    return {
        **record,
        "readable": True,
        "lessons": team.lessons,
        "taught_at": _when(team.taught_ms) if team.lessons else None,
        "marks_weighted": len(team.rows),
        "largest_weight": round(team.largest, 4),
        "half_life_days": HALF_LIFE_DAYS,
        "rate": RATE,
        "bound": BOUND,
        "server_time": _when(now),
    }


def _taught(team: TeamWeights, now: int) -> str:
    ago = _ago(now - team.taught_ms)
    return (
        f"{_lessons(team.lessons)}, the last {_when(team.taught_ms)} ({ago}); "
        f"{len(team.rows)} marks weighted, the largest weight {team.largest:.3f} of ±{BOUND} "
        f"(halving every {HALF_LIFE_DAYS} days)"
    )


def _lessons(n: int) -> str:
    return f"{n} lesson{'s' if n != 1 else ''} from clicks"


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _ago(ms: int) -> str:
    seconds = max(ms, 0) // 1000
    for size, unit in ((86_400, "day"), (3_600, "hour"), (60, "minute"), (1, "second")):
        if seconds >= size or unit == "second":
            n = seconds // size
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    raise AssertionError("unreachable")
