"""What the log's hash chain costs a commit: the commit script as it is (each record linked
to the one before: one HMGET, one SHA-1, one HSET more) against the same script without the
chain (commit.lua as it was before, read from git at ``--before``), both through
``StateStore.commit`` with the same mutations, and a raw Redis ``SET`` round trip as the
baseline, in rounds that alternate (each kind first in turn) so that all three see the same
machine. Medians per call, each as a ratio to the SET measured in the same run."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import uuid
from collections.abc import Callable

from timing import median_us

from bot.redis.connection import connect
from core.state.actor import Actor
from core.state.chain import verify_chain
from core.state.keys import WorkspaceKeys
from core.state.mutation import Mutation, Op
from core.state.scripts import LuaScript
from core.state.store import StateStore

BEFORE = "56b9b3f"  # the last commit whose commit.lua wrote no chain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="alternating rounds (10)")
    parser.add_argument("--reps", type=int, default=1000, help="calls per round and kind (1000)")
    parser.add_argument("--before", default=BEFORE, help="git revision of the unchained script")
    args = parser.parse_args()
    source = subprocess.run(
        ["git", "show", f"{args.before}:core/state/lua/commit.lua"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "chain" not in source, f"{args.before}'s commit.lua already chains"

    client = connect()
    chained = StateStore(client, f"bench-{uuid.uuid4().hex[:8]}")
    plain = StateStore(client, f"bench-{uuid.uuid4().hex[:8]}")
    plain._commit = LuaScript(client, source)  # the same store, the script as it was
    who = Actor.parse("user:bench")
    value = {"text": "a decision of ordinary length, " * 4, "n": 1}
    set_key = chained.keys.bench("set")

    def commit(store: StateStore) -> Callable[[], object]:
        return lambda: store.commit(Mutation(op=Op.SET, key="bench.k", value=value, actor=who))

    kinds: dict[str, Callable[[], object]] = {
        "SET": lambda: client.set(set_key, "x" * 150),
        "commit, chained": commit(chained),
        "commit, unchained": commit(plain),
    }
    medians: dict[str, list[float]] = {name: [] for name in kinds}
    order = list(kinds)
    try:
        for round_ in range(args.rounds):
            for name in order[round_ % 3 :] + order[: round_ % 3]:
                medians[name].append(median_us(kinds[name], args.reps))
        report = verify_chain(client, chained.keys)
        assert report.ok and report.last is not None, report.broken
    finally:
        for workspace in (chained.workspace, plain.workspace):
            names = list(client.scan_iter(match=WorkspaceKeys(workspace).every_key))
            if names:
                client.delete(*names)
    base = statistics.median(medians["SET"])
    print(f"{args.rounds} rounds x {args.reps} calls, median of the rounds' medians")
    for name in kinds:
        median = statistics.median(medians[name])
        print(f"  {name:18} {median:7.1f} µs   {median / base:5.2f} x SET")
    ours, before = (statistics.median(medians[k]) for k in ("commit, chained", "commit, unchained"))
    print(
        f"chained / unchained: {ours / before:.3f}  "
        f"(the chain of {report.last.n} records verified after the run)"
    )


if __name__ == "__main__":
    main()
