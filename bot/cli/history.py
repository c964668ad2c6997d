"""``deliberate log`` and ``deliberate replay [--verify]``."""

from __future__ import annotations

import argparse
import sys

from bot.app import App
from bot.cli.args import state_key
from bot.cli.render import json_line, log_line
from core.state.replay import Replayer, visible

__all__ = ["register"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    log = commands.add_parser(
        "log", help="show the mutation log", description="Show committed mutations, oldest first."
    )
    log.add_argument("--key", type=state_key, help="only mutations of this key")
    log.add_argument(
        "--limit", type=int, default=50, metavar="N", help="the newest N mutations (default 50)"
    )
    log.add_argument("--json", action="store_true", help="one JSON object per line")
    log.set_defaults(handler=_log)

    replay = commands.add_parser(
        "replay",
        help="rebuild state from the log",
        description="Rebuild the snapshot from the mutation log (from the latest checkpoint), "
        "saving checkpoints as it goes. With --verify, compare it with the live snapshot and "
        "exit 1 on any difference, naming the keys.",
    )
    replay.add_argument("--verify", action="store_true", help="compare with the live snapshot")
    replay.add_argument(
        "--from-scratch", action="store_true", help="ignore checkpoints and replay the whole log"
    )
    replay.set_defaults(handler=_replay)


def _log(app: App, args: argparse.Namespace) -> int:
    if args.limit < 1:
        print("deliberate log: --limit must be at least 1", file=sys.stderr)
        return 2
    log = app.log
    for record in log.latest(args.limit, key=args.key):
        print(json_line(record.to_dict()) if args.json else log_line(record))
    for skipped in log.skipped:  # never a silent gap; the others are still shown
        print(f"deliberate log: {skipped}; skipped", file=sys.stderr)
    return 0


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _since(replayer: Replayer) -> str:
    start = replayer.started_after
    return f" after the checkpoint at {start}" if start else ""


def _progress(count: int) -> None:
    print(f"  replayed {count} mutations...", file=sys.stderr)


def _replay(app: App, args: argparse.Namespace) -> int:
    replayer = Replayer(app.store, app.config.store.checkpoint_every, progress=_progress)
    if not args.verify:
        image = replayer.rebuild(use_checkpoint=not args.from_scratch)
        now = app.store.snapshot().at_ms
        print(
            f"replayed {_count(replayer.applied, 'mutation')}{_since(replayer)} up to "
            f"{image.last_id or 'the start'}: {_count(len(visible(image, now)), 'live key')}, "
            f"{_count(len(image.versions), 'key')} ever written"
        )
        return 0
    live, diffs = replayer.verify(use_checkpoint=not args.from_scratch)
    print(
        f"replayed {_count(replayer.applied, 'mutation')}{_since(replayer)} up to "
        f"{live.last_log_id or 'the start'}; the live snapshot has "
        f"{_count(len(live.entries), 'key')}"
    )
    if diffs:
        print(f"MISMATCH in {len(diffs)} key(s):")
        for diff in diffs:
            print(f"  {diff}")
        return 1
    print("OK: the replayed snapshot equals the live one")
    return 0
