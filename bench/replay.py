"""How fast the log replays: ``deliberate replay --verify --from-scratch`` as a user runs it
(a fresh process: start-up, the live snapshot, every record read, applied and compared), and
``Replayer.verify`` in this process (the same work without the start-up), in mutations per
second; against the raw reading of the same log (``XRANGE`` in pages of 1,000, no decoding)
measured in the same rounds. Beside them, the rate each replay says of itself (the command's
summary line, ``Replayer.pace``: the median of its runs of 1,000 records, the records alone),
the machine's load average before and after, and the command that made the figures.

The log is written first, through ``StateStore.commit`` (the commit script, hash chain and
all): ``--mutations`` of them over ``--keys`` keys, sets, increments and appends mixed, in a
workspace of its own that is deleted afterwards. The command runs with its bytecode cached,
as an installed program's is (PYTHONDONTWRITEBYTECODE dropped, the cache in a temporary
PYTHONPYCACHEPREFIX, written by a first run before the rounds), as ``bench/startup.py`` does.

    python bench/replay.py                       # 100,000 mutations over 500 keys, 3 rounds
    python bench/replay.py --mutations 20000 --rounds 1
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable

from bot.redis.connection import connect, connection_url
from core.state.actor import Actor
from core.state.keys import WorkspaceKeys
from core.state.mutation import Mutation, Op
from core.state.replay import Replayer
from core.state.store import StateStore


def write_log(store: StateStore, mutations: int, keys: int) -> None:
    who = Actor.parse("user:bench")
    for n in range(mutations):
        key, kind = f"bench.k{n % keys}", (n // keys) % 3
        if n < keys:  # each key starts as a list: appends and (on .count) increments follow
            op, name, value = Op.SET, key, [n]
        elif kind == 0:
            op, name, value = Op.APPEND, key, {"n": n, "text": "a decision of ordinary length"}
        elif kind == 1:
            op, name, value = Op.INCR, f"{key}.count", 1
        else:
            op, name, value = Op.SET, f"{key}.note", {"n": n, "by": "bench", "ok": True}
        store.commit(Mutation(op=op, key=name, value=value, actor=who))
        if (n + 1) % 20_000 == 0:
            print(f"  {n + 1:,} mutations written", file=sys.stderr)


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mutations", type=int, default=100_000, help="log length (100,000)")
    parser.add_argument("--keys", type=int, default=500, help="keys written (500)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (3)")
    args = parser.parse_args()

    client = connect()
    store = StateStore(client, f"bench-{uuid.uuid4().hex[:8]}")
    bytecode = tempfile.mkdtemp(prefix="deliberate-pycache-")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(REDIS_URL=connection_url(client), PYTHONPYCACHEPREFIX=bytecode)
    # ``deliberate replay --verify``, by this interpreter (the venv need not be on PATH)
    command = [sys.executable, "-m", "bot.main", "--workspace", store.workspace]
    command += ["replay", "--verify"]
    try:
        write_log(store, args.mutations, args.keys)
        records = int(client.xlen(store.keys.log))

        def raw() -> None:
            start = "-"
            while page := client.xrange(store.keys.log, start, "+", count=1000):
                start = "(" + str(page[-1][0])

        said: dict[str, list[float]] = {"Replayer.verify": [], "deliberate replay": []}

        def in_process() -> None:
            replayer = Replayer(store)
            _, diffs = replayer.verify(use_checkpoint=False)
            assert not diffs, diffs[:3]
            if replayer.pace.rate is not None:
                said["Replayer.verify"].append(replayer.pace.rate)

        def cli() -> None:
            done = subprocess.run(
                [*command, "--from-scratch"], env=env, check=True, capture_output=True, text=True
            )
            if found := re.search(r"; ([0-9,]+) records/s", done.stdout):
                said["deliberate replay"].append(float(found[1].replace(",", "")))

        cli()  # writes the bytecode
        said["deliberate replay"].clear()
        load_before = os.getloadavg()
        kinds = {"raw XRANGE": raw, "Replayer.verify": in_process, "deliberate replay": cli}
        seconds: dict[str, list[float]] = {name: [] for name in kinds}
        order = list(kinds)
        for round_ in range(args.rounds):
            for name in order[round_ % 3 :] + order[: round_ % 3]:
                seconds[name].append(timed(kinds[name]))
        load_after = os.getloadavg()
    finally:
        names = list(client.scan_iter(match=WorkspaceKeys(store.workspace).every_key))
        if names:
            client.delete(*names)
        shutil.rmtree(bytecode, ignore_errors=True)

    base = statistics.median(seconds["raw XRANGE"])
    print(f"$ python bench/replay.py {' '.join(sys.argv[1:])}".rstrip())
    print(f"load average {_load(load_before)} before, {_load(load_after)} after")
    print(f"replay of {records:,} records over {args.keys * 3:,} keys, median of {args.rounds}:")
    for name, runs in seconds.items():
        median = statistics.median(runs)
        own = f"; says {statistics.median(said[name]):,.0f} records/s" if said.get(name) else ""
        print(
            f"  {name:18} {records / median:>10,.0f} mutations/s"
            f"  ({median:.2f} s; {median / base:.1f}x the raw read{own})"
        )


def _load(averages: tuple[float, float, float]) -> str:
    return "/".join(f"{x:.2f}" for x in averages)


if __name__ == "__main__":
    main()
