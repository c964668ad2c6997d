"""Whether our ``LuaScript`` (EVALSHA, SCRIPT LOAD on NOSCRIPT) still earns its place over
redis-py's ``Script``, on the read script (one key's entry and version: the store's cheapest
script, so the client's share is largest here).

The same calls through ``LuaScript`` and through ``Script``, and a Redis ``PING`` round trip
as the baseline, in rounds that alternate (each kind first in
turn) so that all three see the same machine. Medians per call, and each as a ratio to the PING.
"""

from __future__ import annotations

import argparse
import statistics
import uuid
from collections.abc import Callable

from timing import median_us

from bot.redis.connection import connect
from core.state.keys import WorkspaceKeys
from core.state.scripts import READ_LUA, LuaScript


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="alternating rounds (10)")
    parser.add_argument("--reps", type=int, default=2000, help="calls per round and kind (2000)")
    args = parser.parse_args()

    client = connect()
    keys = WorkspaceKeys(f"bench-{uuid.uuid4().hex[:8]}")
    names, argv = [keys.entry("bench.k"), keys.versions], ["bench.k"]
    ours, theirs = LuaScript(client, READ_LUA), client.register_script(READ_LUA)
    kinds: dict[str, Callable[[], object]] = {
        "PING": client.ping,
        "LuaScript": lambda: ours(keys=names, args=argv),
        "Script": lambda: theirs(keys=names, args=argv),
    }
    medians: dict[str, list[float]] = {name: [] for name in kinds}
    order = list(kinds)
    for round_ in range(args.rounds):
        for name in order[round_ % 3 :] + order[: round_ % 3]:  # each kind first in turn
            medians[name].append(median_us(kinds[name], args.reps))
    ping = statistics.median(medians["PING"])
    print(f"{args.rounds} rounds x {args.reps} calls, median of the rounds' medians")
    for name in kinds:
        median = statistics.median(medians[name])
        print(f"  {name:9} {median:7.1f} µs   {median / ping:5.2f} x PING")
    ours_median = statistics.median(medians["LuaScript"])
    print(f"Script / LuaScript: {statistics.median(medians['Script']) / ours_median:.3f}")


if __name__ == "__main__":
    main()
