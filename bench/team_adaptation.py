"""Would a team's clicks teach the classifier its own way of agreeing? (issue 42: a measure,
before anything is built into the bot.)

Each held-out meeting (``tests/data/meeting_test.jsonl``, fourteen meetings no message of
which trains) is a team. Its first half is replayed as the bot would read it, each message after
the ones before it (``core/runtime/conversations.py``), and the team clicks as its gold
labels say: "Use this" after a message that was a commit but was read as something else,
"Try another angle" after one read as a commit that was not. Each click is a label for that
message's features (the shipped model's own, ``ctx:`` ones included): a perceptron step on
a table of the team's own weights added to the shipped model's (the embedded classifier
reads with the sum, ``EmbeddedClassifier(model)``) (commit up and the
act read down after "Use this"; commit down and brainstorm up after "Try another angle",
all a click can say), each weight kept within ``BOUND``. Then the second half is read with
and without the team's table: accuracy, commit recall and false commits of both, per
meeting and over all four, and how many clicks taught it.

    python bench/team_adaptation.py [--rate 0.5] [--bound 2.0]

It measures the idea, nothing more: no Redis, no decay over time, a team of one meeting.
Measured (the shipped weights, gate 0.0; 1,385 messages in the second halves): 76.5%, commits
found 44%, false commits 1.8%; with the team's clicks (0 to 25 a meeting) 66.9% at a step of
0.5 (bound 2; false commits 11.3%), 72.9% at 0.25 (bound 1; 6.2%), 76.4% at 0.1 (bound 0.5:
commits found 51%, false commits 3.2%); teaching every feature (--all) 64.8%. A meeting's few
clicks move words that the next half uses otherwise: at best a small step finds more
commits for more false ones, and nothing is built on it."""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from core.config.core_config import load_config
from core.deliberation.interpretation import ActType
from core.deliberation.recent import TurnContext
from core.perception.embedded import EmbeddedClassifier
from core.perception.evaluation import Scores, evaluate
from core.perception.features import features
from core.perception.in_context import context_features
from core.perception.linear import LinearModel
from core.perception.model import weights
from core.runtime.conversations import contexts, conversation_of

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "meeting_test.jsonl"
ACTS = list(ActType)
COMMIT, BRAINSTORM = ACTS.index(ActType.COMMIT), ACTS.index(ActType.BRAINSTORM)
Team = dict[str, list[float]]
Step = tuple[float, float, tuple[str, ...]]  # a click's step, the largest weight, what it teaches
# the features a click teaches: a turn's words and word pairs and what it reads in context;
# not its shape or length, which every turn shares with many others (--all: every feature)
TAUGHT: tuple[str, ...] = ("w:", "b:", "ctx:")


def with_team(team: Team) -> EmbeddedClassifier:
    """The embedded classifier reading with the shipped weights and ``team``'s added."""
    shipped = weights()
    if not team:
        return EmbeddedClassifier(shipped)
    zero = [0.0] * len(ACTS)
    added = {
        name: [a + b for a, b in zip(shipped.weights.get(name, zero), row, strict=True)]
        for name, row in team.items()
    }
    return EmbeddedClassifier(LinearModel(shipped.classes, shipped.bias, shipped.weights | added))


def read(
    text: str, context: TurnContext | None, reader: EmbeddedClassifier, gate: float
) -> ActType:
    """The act the loop would route ``text`` as, read by ``reader``."""
    return reader.classify(text, None, context).routed(gate)


def learn(team: Team, found: list[str], up: int, down: int, step: Step) -> None:
    rate, bound, taught = step
    for name in found:
        if not name.startswith(taught):
            continue
        row = team.setdefault(name, [0.0] * len(ACTS))
        row[up] = min(bound, row[up] + rate)
        row[down] = max(-bound, row[down] - rate)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=0.5, help="a click's step")
    parser.add_argument("--bound", type=float, default=2.0, help="the largest team weight")
    parser.add_argument("--all", action="store_true", help="teach every feature of a turn")
    args = parser.parse_args()
    step: Step = (args.rate, args.bound, ("",) if args.all else TAUGHT)
    gate: float = load_config(None).perception.min_confidence
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    shipped_reader = EmbeddedClassifier()
    read_in = contexts(rows, shipped_reader)
    meetings: dict[str, list[int]] = defaultdict(list)
    for n, row in enumerate(rows):
        meetings[str(conversation_of(row))].append(n)
    totals: dict[str, list[ActType]] = {"truth": [], "shipped": [], "team": []}
    print("| meeting | second half | shipped | with the team's clicks | clicks |")
    print("|---|---|---|---|---|")
    for log, lines in meetings.items():
        half = len(lines) // 2
        team: Team = {}
        reader, clicks = shipped_reader, 0
        for n in lines[:half]:
            text, context = rows[n]["text"], read_in[n]
            said, gold = read(text, context, reader, gate), ActType(rows[n]["act_type"])
            found = features(text) + context_features(text, context)
            if gold is ActType.COMMIT and said is not ActType.COMMIT:  # "Use this"
                learn(team, found, COMMIT, ACTS.index(said), step)
            elif said is ActType.COMMIT and gold is not ActType.COMMIT:  # "Try another angle"
                learn(team, found, BRAINSTORM, COMMIT, step)
            else:
                continue
            reader, clicks = with_team(team), clicks + 1
        rest = lines[half:]
        truth = [ActType(rows[n]["act_type"]) for n in rest]
        shipped = [read(rows[n]["text"], read_in[n], shipped_reader, gate) for n in rest]
        taught = [read(rows[n]["text"], read_in[n], reader, gate) for n in rest]
        before, after = evaluate(truth, shipped), evaluate(truth, taught)
        name = log.rsplit("/", 1)[-1][:40]
        print(f"| {name} | {len(rest)} | {_row(before)} | {_row(after)} | {clicks} |")
        totals["truth"] += truth
        totals["shipped"] += shipped
        totals["team"] += taught
    before = evaluate(totals["truth"], totals["shipped"])
    after = evaluate(totals["truth"], totals["team"])
    print(f"| all {len(meetings)} | {before.n} | {_row(before)} | {_row(after)} | |")


def _row(scores: Scores) -> str:
    return (
        f"{scores.accuracy:.1%}, commits found {scores.recall(ActType.COMMIT):.0%}, "
        f"false commits {scores.false_commit_rate:.1%}"
    )


if __name__ == "__main__":
    main()
