"""What ``/deliberate log KEY`` and ``why KEY`` cost on a long log (any member may send them):
a key never written, a key last changed before the newest ``KEY_SCAN`` records, a key changed
just now; and, for comparison, reading the whole log for the old key as ``log KEY`` did
before it was bounded (the operator's ``deliberate log --key`` still does).

A fresh workspace gets ``--records`` commits (one key written first, then changes of 50
others); each question is then timed in rounds that alternate with a Redis ``PING`` round
trip, the baseline. Medians per question, each as a ratio to the PING.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import uuid
from collections.abc import Callable

from timing import median_ms

from bot.app import App, build_app
from bot.chat.answers import KEY_SCAN, answer
from core.state.actor import Actor
from core.state.keys import WorkspaceKeys
from core.state.mutation import Mutation, Op

_ASKERS = itertools.count()


def asker() -> str:
    """A new person for each question: each is counted, as chat counts it, and none is held
    back by the limit on how often one person may ask (``bot.chat.answers.READS_PER_MINUTE``)."""
    return f"bench:U{next(_ASKERS)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000, help="log length (100000)")
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds (7)")
    parser.add_argument("--reps", type=int, default=5, help="calls per round and question (5)")
    args = parser.parse_args()

    app = build_app(f"bench-{uuid.uuid4().hex[:8]}")
    try:
        fill(app, args.records)
        questions: dict[str, Callable[[], object]] = {
            "PING": app.redis.ping,
            "log never.written": lambda: answer(app, "log decision.never-written", asker=asker()),
            "why never.written": lambda: answer(app, "why decision.never-written", asker=asker()),
            "log old": lambda: answer(app, "log decision.old", asker=asker()),
            "why old": lambda: answer(app, "why decision.old", asker=asker()),
            "log recent": lambda: answer(app, "log decision.other-0", asker=asker()),
            "why recent": lambda: answer(app, "why decision.other-0", asker=asker()),
            "whole log, old": lambda: app.log.latest(30, key="decision.old"),
        }
        medians: dict[str, list[float]] = {name: [] for name in questions}
        order = list(questions)
        for round_ in range(args.rounds):
            turn = round_ % len(order)
            for name in order[turn:] + order[:turn]:  # each first in turn
                medians[name].append(median_ms(questions[name], args.reps))
    finally:
        names = list(app.redis.scan_iter(match=WorkspaceKeys(app.store.workspace).every_key))
        if names:
            app.redis.delete(*names)
    ping = statistics.median(medians["PING"])
    print(
        f"{args.records + 1} log records, KEY_SCAN {KEY_SCAN}; "
        f"{args.rounds} rounds x {args.reps} calls, median of the rounds' medians"
    )
    for name in questions:
        median = statistics.median(medians[name])
        print(f"  {name:18} {median:9.3f} ms   {median / ping:9.1f} x PING")
    whole, bounded = (statistics.median(medians[n]) for n in ("whole log, old", "log old"))
    print(f"whole log / bounded log of an old key: {whole / bounded:.1f}")


def fill(app: App, records: int) -> None:
    """``decision.old`` first, then ``records`` changes of 50 other keys."""
    who = Actor.parse("user:bench")
    app.store.commit(Mutation(op=Op.SET, key="decision.old", value="postgres", actor=who))
    for i in range(records):
        app.store.commit(Mutation(op=Op.SET, key=f"decision.other-{i % 50}", value=i, actor=who))


if __name__ == "__main__":
    main()
