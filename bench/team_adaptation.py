"""Do a team's clicks teach the classifier its own way of agreeing? (issue 42.) What the bot
does (``core/perception/team.py``), replayed on conversations no message of which trains.

Each held-out meeting (``tests/data/meeting_test.jsonl``, fourteen meetings; ``--dev``: the
two of ``meeting_dev.jsonl``) is a team. Its first half is replayed as the bot would read it,
each message after the ones before it (``core/runtime/conversations.py``), and the team
clicks as its gold labels say: "Use this" after a message that was a commit but was read as
something else, "Try another angle" after one read as a commit that was not. Each click is
the lesson the bot learns (``TeamWeights.learned``: the message's marks, its hashed words and
word pairs, a step of ``RATE`` within ``BOUND``), and the embedded classifier reads with the
team's weights added (``EmbeddedClassifier.with_team``), as the runtime does. Then the second
half is read with and without them: accuracy, commit recall and false commits of both, per
meeting and over all, and how many clicks taught.

    python bench/team_adaptation.py [--rate 0.05] [--bound 0.25] [--dev]

No Redis, no decay (a meeting lasts an hour; the table's half-life is two weeks). Measured
(this release's weights, gate 0.0; 1,385 messages in the second halves of the fourteen):
see bench/README.md."""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from core.config.core_config import load_config
from core.deliberation.interpretation import ActType
from core.deliberation.recent import TurnContext
from core.perception import team as shipped_team
from core.perception.embedded import EmbeddedClassifier
from core.perception.evaluation import Scores, evaluate
from core.perception.team import Lesson, TeamWeights, marks
from core.runtime.conversations import contexts, conversation_of

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
# the readings a click can correct (``core.deliberation.update.clicks``): a turn read as an
# idea or an edit changed what is on the table, and a click after it speaks of that
TOLD = frozenset({ActType.TANGENT, ActType.QUESTION, ActType.COMMIT})


def read(
    text: str, context: TurnContext | None, reader: EmbeddedClassifier, gate: float
) -> ActType:
    """The act the loop would route ``text`` as, read by ``reader``."""
    return reader.classify(text, None, context).routed(gate)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=shipped_team.RATE, help="a click's step")
    parser.add_argument("--bound", type=float, default=shipped_team.BOUND, help="largest weight")
    parser.add_argument("--dev", action="store_true", help="the dev meetings, not the test ones")
    args = parser.parse_args()
    # (the step and bound a lesson takes are the module's: a run with others sets them)
    shipped_team.RATE, shipped_team.BOUND = args.rate, args.bound
    gate: float = load_config(None).perception.min_confidence
    path = DATA / ("meeting_dev.jsonl" if args.dev else "meeting_test.jsonl")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    shipped = EmbeddedClassifier()
    read_in = contexts(rows, shipped)
    meetings: dict[str, list[int]] = defaultdict(list)
    for n, row in enumerate(rows):
        meetings[str(conversation_of(row))].append(n)
    totals: dict[str, list[ActType]] = {"truth": [], "shipped": [], "team": []}
    print(f"step {args.rate}, bound {args.bound}, {path.name}\n")
    print("| meeting | second half | shipped | with the team's clicks | clicks |")
    print("|---|---|---|---|---|")
    for log, lines in meetings.items():
        half = len(lines) // 2
        team, clicks = TeamWeights(), 0
        for n in lines[:half]:
            text, context = rows[n]["text"], read_in[n]
            said = read(text, context, shipped.with_team(team), gate)
            gold = ActType(rows[n]["act_type"])
            if said not in TOLD:  # the bot's own idea or edit is on the table: no lesson
                continue
            if gold is ActType.COMMIT and said is not ActType.COMMIT:  # "Use this"
                lesson = Lesson(marks(text, context), ActType.COMMIT, said, f"{log}:{n}")
            elif said is ActType.COMMIT and gold is not ActType.COMMIT:  # "Try another angle"
                lesson = Lesson(marks(text, context), None, ActType.COMMIT, f"{log}:{n}")
            else:
                continue
            team, clicks = team.learned(lesson, 0), clicks + 1
        rest = lines[half:]
        truth = [ActType(rows[n]["act_type"]) for n in rest]
        alone = [read(rows[n]["text"], read_in[n], shipped, gate) for n in rest]
        taught = [read(rows[n]["text"], read_in[n], shipped.with_team(team), gate) for n in rest]
        before, after = evaluate(truth, alone), evaluate(truth, taught)
        name = log.rsplit("/", 1)[-1][:40]
        print(f"| {name} | {len(rest)} | {_row(before)} | {_row(after)} | {clicks} |")
        totals["truth"] += truth
        totals["shipped"] += alone
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
