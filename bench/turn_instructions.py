"""Instructions per chat turn on the client, counted by valgrind (cachegrind) rather than timed:
on a machine that other processes load, a count holds where a time does not. Against one
Redis ``PING`` round trip made by the same client, counted in the same run.

The 50-turn conversation of ``turn_overhead.py`` goes ``--reps`` times through
``Runtime.send`` against ``REDIS_URL`` (embedded classifier, offline responder; the turns
only: the "Use this" clicks are ``--clicks``), and, apart, through the pure parts of a turn
(``Loop.update`` x3, classify, evaluate, render: no Redis). Each count is less the same
process after its warm-up conversation alone (start-up, imports, scripts loaded), divided by
the turns; the PING process makes four PINGs for each turn the others make. The metrics are
sent once, at the end (not every second of valgrind's slow time), and every process hashes
strings alike (``PYTHONHASHSEED=0``: a start-up's count moves by tens of millions with the
seed).

Needs valgrind. Slow: valgrind runs Python some fifty times slower (a minute or two a count).

    python bench/turn_instructions.py             # 3 runs of the conversation (150 turns)
    python bench/turn_instructions.py --reps 5 --clicks
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import uuid

from offsite import ALICE, CONVERSATION, TOPIC
from prompt_size import redis_client
from turn_overhead import EvaluateTimer, conversation, unread

import core.metrics.tally
from bot.app import build_app
from core.config.core_config import load_config
from core.deliberation.messages import ActionClicked, UserSaid
from core.deliberation.update.loop import Loop
from core.deliberation.view import View
from core.metrics.tally import flush_all
from core.runtime.runner import Runtime
from core.state.keys import WorkspaceKeys

VALGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
KINDS = ("runtime", "pure", "ping")
PINGS = 4  # PINGs counted per turn counted (the fewer, the more a stray instruction weighs)


def talk(runtime: Runtime, session_id: str, clicks: bool) -> int:
    """The conversation through ``runtime.send`` (its clicks too with ``clicks``); the number
    of messages sent."""
    topic = f"{session_id} {TOPIC}"  # each run decides its own key
    sent = 0
    unread()  # (each run reads its turns afresh, as the pure runs do)
    for n, step in enumerate(CONVERSATION, start=1):
        events = runtime.send(session_id, UserSaid(text=step.text, actor=ALICE, topic=topic))
        sent += 1
        [view] = [e for e in events if isinstance(e, View)]
        if clicks and step.click and view.candidate is not None:
            click = ActionClicked(
                action="ConfirmCurrent",
                target_id=view.candidate.id,
                expected_version=view.candidate.version,
                click_id=f"count-{uuid.uuid4().hex[:12]}-{n}",
                actor=ALICE,
            )
            runtime.send(session_id, click)
            sent += 1
    return sent


def work(kind: str, reps: int, clicks: bool) -> None:
    """Warm up (one conversation through the runtime and one through the pure loop), then
    ``reps`` conversations of ``kind``, or as many PINGs as they have turns."""
    # the metrics sent once, at the end, in every process: not once a second of valgrind's time
    core.metrics.tally.FLUSH_SEC = 86_400.0
    workspace = f"count-{uuid.uuid4().hex[:8]}"
    client = redis_client()
    runtime = build_app(workspace, client=client).runtime(use_env=False)
    loop = Loop(load_config().loop_settings())
    timer = EvaluateTimer()  # (not installed: the loop's own evaluate runs)
    try:
        talk(runtime, "count:warm-up", clicks)
        conversation(loop, timer, None, -1, clicks)
        client.ping()
        for rep in range(reps):
            if kind == "runtime":
                talk(runtime, f"count:runtime-{rep}", clicks)
            elif kind == "pure":
                conversation(loop, timer, None, rep, clicks)
            else:
                for _ in range(PINGS * len(CONVERSATION)):
                    client.ping()
    finally:
        flush_all()  # (its metrics hash goes with the rest, not written after it)
        names = list(client.scan_iter(match=WorkspaceKeys(workspace).every_key, count=1000))
        if names:
            client.delete(*names)


def refs(text: str) -> int:
    found = re.search(r"I\s+refs:\s+([\d,]+)", text)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output: {text[-500:]}")
    return int(found.group(1).replace(",", ""))


def count(kind: str, reps: int, clicks: bool) -> int:
    """Instructions of a process doing ``reps`` runs of ``kind`` (its start-up included)."""
    command = [*VALGRIND, sys.executable, __file__, "--worker", kind, "--reps", str(reps)]
    done = subprocess.run(
        command + (["--clicks"] if clicks else []),
        env={**os.environ, "PYTHONHASHSEED": "0"},  # (else start-up's count varies by ~2%)
        capture_output=True,
        text=True,
        check=True,
    )
    return refs(done.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=3, help="runs of the conversation (3)")
    parser.add_argument("--clicks", action="store_true", help="the 'Use this' clicks too")
    parser.add_argument("--worker", choices=KINDS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        work(args.worker, args.reps, args.clicks)
        return
    none = count("ping", 0, args.clicks)
    per = {k: (count(k, args.reps, args.clicks) - none) for k in KINDS}
    turns = args.reps * len(CONVERSATION)
    ping = per["ping"] / (turns * PINGS)
    what = "turns and their clicks" if args.clicks else "turns"
    print(
        f"instructions on the client (valgrind), {args.reps} runs of the {len(CONVERSATION)}-"
        f"turn conversation ({what}), per turn; against one PING round trip:"
    )
    print("| per turn | instructions | ratio to one PING |")
    print("|---|---|---|")
    for name, kind in (
        ("Runtime.send of a turn (Redis, offline responder)", "runtime"),
        ("pure turn (3 updates, classify, offline responder, evaluate, render; no Redis)", "pure"),
        ("Redis PING round trip (baseline)", "ping"),
    ):
        n = per[kind] / (turns * PINGS if kind == "ping" else turns)
        print(f"| {name} | {n:,.0f} | {n / ping:.1f} |")
    extra = (per["runtime"] - per["pure"]) / turns
    print(f"\nWhat Runtime.send adds to the pure turn: {extra:,.0f} instructions a turn.")


if __name__ == "__main__":
    main()
