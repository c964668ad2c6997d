"""How far a Slack message and a Slack click travel through our code (issue 43): a real Bolt app
behind our HTTP server, its Web API calls going to a local Slack server, signed requests of
the shapes Slack documents (the suite's Slack rig), and every call of our own code that
handling them makes, in every thread, recorded by ``threading.setprofile``.

For each, from the request to the last thing the bot does for it:

- hops: the times the walk moved into one of our files from another: a call into it (from
  another of ours, a library or the thread pool), or a return to it from another of ours (a
  call within a file is no hop);
- files: the files of ours entered;
- the adapter and the runtime: how many of those hops landed in ``bot/slack/adapter.py`` and
  in the runtime's ``runner.py``.

    python bench/walks.py                       # REDIS_URL, else the embedded Redis
    python bench/walks.py --against ../old      # and the same walks in another checkout

With ``--against DIR`` the same script walks DIR's code too (its own ``bot``, ``core`` and
Slack rig, in a process of its own) in the same run, and prints now / then for each figure.
It measures the code's shape, not its speed: the figures are counts, the same every run of
one commit (a retry or a second thread's timing can add a few)."""

from __future__ import annotations

import argparse
import atexit
import json
import os
import subprocess
import sys
import tempfile
import threading
import uuid
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(os.environ.get("WALKS_ROOT") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))  # the code, and the suite's Slack rig (tests/) beside it

from bot.app import build_app  # noqa: E402
from core.metrics.tally import flush_all  # noqa: E402
from tests.bot.slack.rig import SlackBot, mention  # noqa: E402
from tests.conftest import delete_workspace  # noqa: E402
from tests.servers.slack_api import SlackServer  # noqa: E402

OURS = ("bot", "core", "rules", "connectors")


class Walk:
    """The calls of our code made while ``on``: hops, files, entries of each file."""

    def __init__(self, base: Path) -> None:
        self.base = str(base) + os.sep
        self.on = False
        self.hops = 0
        self.files: set[str] = set()
        self.entered: Counter[str] = Counter()
        self._lock = threading.Lock()

    def _ours(self, filename: str) -> str | None:
        if not filename.startswith(self.base):
            return None
        relative = filename[len(self.base) :]
        return relative if relative.split(os.sep, 1)[0] in OURS else None

    def profile(self, frame: FrameType, event: str, _: Any) -> None:
        if not self.on or event not in ("call", "return"):
            return
        here = self._ours(frame.f_code.co_filename)
        back = frame.f_back
        there = None if back is None else self._ours(back.f_code.co_filename)
        if here == there:
            return
        # a call into one of our files from another (or from a library), or a return from
        # one of ours to another: the walk is in another file
        into = here if event == "call" else there
        if into is None:
            return
        with self._lock:
            self.hops += 1
            self.files.add(into)
            self.entered[into] += 1

    def entries(self, ending: str) -> int:
        return sum(n for name, n in self.entered.items() if name.endswith(ending))


def measure(bot: SlackBot, walk: Walk, what: str) -> dict[str, int]:
    walk.hops, walk.files, walk.entered = 0, set(), Counter()
    walk.on = True
    try:
        if what == "message":
            bot.event(mention("what if we used postgres for the orders service"))
            bot.replies(1)
        else:
            [reply] = bot.replies(1)
            bot.click(reply, "ConfirmCurrent")
            bot.slack.wait_until(lambda: bot.slack.updates)
        bot.listeners.idle()
    finally:
        walk.on = False
    return {
        "hops": walk.hops,
        "files": len(walk.files),
        "adapter": walk.entries(os.path.join("slack", "adapter.py")),
        "runtime": walk.entries(os.path.join("runtime", "runner.py")),
    }


def forget(redis: Any, workspace: str) -> None:
    """The walks' workspace gone from Redis, once its counts are sent (``core.metrics``
    sends a process's counts as it exits: this runs first, and sends them itself)."""
    flush_all()
    delete_workspace(redis, workspace)


def walked() -> dict[str, dict[str, int]]:
    """The two walks through the code on ``sys.path`` first."""
    import bot as package

    base = Path(package.__file__).resolve().parent.parent
    walk = Walk(base)
    threading.setprofile(walk.profile)  # the listener pool's threads, made later
    sys.setprofile(walk.profile)
    workspace = f"bench-walks-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as home, SlackServer(channels={"C0TEAM"}) as slack:
        os.environ.setdefault("DELIBERATE_HOME", home)
        config = Path(home) / "deliberate.yaml"
        config.write_text(
            f"tenants:\n  slack:\n    teams:\n      - {{id: T0TEST, workspace: {workspace}}}\n",
            encoding="utf-8",
        )
        app = build_app(workspace, [config])
        # nothing of the walks is left in Redis, the counts the process sends included
        atexit.register(forget, app.redis, workspace)
        bot = SlackBot(app, slack).start()
        try:
            message = measure(bot, walk, "message")
            click = measure(bot, walk, "click")
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
            bot.stop()
    return {"message": message, "click": click}


NAMES = {"message": "a message to its rendered candidate", "click": 'a "Use this" click'}
FIGURES = ("hops", "files", "adapter", "runtime")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, metavar="DIR", help="another checkout to walk")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    now = walked()
    if args.json:
        print(json.dumps(now))
        return
    then = None
    if args.against is not None:
        there = args.against.resolve()
        env = os.environ | {"PYTHONPATH": str(there), "WALKS_ROOT": str(there)}
        done = subprocess.run(
            [sys.executable, __file__, "--json"],
            env=env,
            cwd=there,
            capture_output=True,
            text=True,
            check=True,
        )
        then = json.loads(done.stdout.splitlines()[-1])
    print("| walk | moves between our files | files | into the adapter | into the runtime |")
    print("|---|---|---|---|---|")
    for walk, name in NAMES.items():
        cells = []
        for figure in FIGURES:
            cell = str(now[walk][figure])
            if then is not None:
                before = then[walk][figure]
                cell += f" (then {before}; {now[walk][figure] / before:.2f}x)" if before else ""
            cells.append(cell)
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
