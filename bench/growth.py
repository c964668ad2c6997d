"""How much Redis memory a workspace takes after many commits, with retention and without.

Two workspaces get the same commits (sets of ~300-byte decisions over 200 keys, and
increments of 50 counters). One never compacts; the other compacts every ``--every``
commits keeping ``--keep`` records, as the worker does on its schedule. Memory is the sum of
``MEMORY USAGE`` over each workspace's keys, split into the log, idempotency records and
the rest (entries, versions, index, checkpoint). The bound stated for the retained one:
its state, checkpoint and idempotency records, plus ``keep + every`` log records of the
mean size measured in the unretained run.

    python bench/growth.py                 # 100,000 commits each (a minute or two)
    python bench/growth.py --commits 2000  # quick
"""

from __future__ import annotations

import argparse
import statistics
import uuid
from collections import defaultdict

from bot.redis.connection import connect
from core.redis.client import RedisClient
from core.state.compaction import Compactor, Retention
from core.state.mutation import Mutation
from core.state.store import StateStore

TEXT = "we agreed to ship the billing service on managed postgres with one read replica; " * 4


def commits(n: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i in range(n):
        if i % 5 == 4:
            out.append({"op": "incr", "key": f"counter.c{i % 50}", "value": 1})
        else:
            out.append({"op": "set", "key": f"decision.d{i % 200}", "value": f"{i}: {TEXT}"})
    return out


def run(client: RedisClient, n: int, retention: Retention | None, every: int) -> dict[str, int]:
    workspace = f"bench-growth-{uuid.uuid4().hex[:8]}"
    store = StateStore(client, workspace)
    actor = {"kind": "user", "id": "bench"}
    try:
        for i, fields in enumerate(commits(n), start=1):
            store.commit(Mutation.model_validate({**fields, "actor": actor}))
            if retention is not None and i % every == 0:
                Compactor(store, retention).run()
        if retention is not None:
            Compactor(store, retention).run()
        return usage(client, store) | {"log_records": int(client.xlen(store.keys.log))}
    finally:
        names = list(client.scan_iter(match=store.keys.every_key, count=1000))
        for start in range(0, len(names), 1000):
            client.delete(*names[start : start + 1000])


def usage(client: RedisClient, store: StateStore) -> dict[str, int]:
    parts: dict[str, int] = defaultdict(int)
    idem = store.keys.idempotency("")
    for name in client.scan_iter(match=store.keys.every_key, count=1000):
        size = int(client.memory_usage(name, samples=0) or 0)
        part = "log" if name == store.keys.log else "idem" if name.startswith(idem) else "state"
        parts[part] += size
        parts["total"] += size
    return dict(parts)


def mib(n: float) -> str:
    return f"{n / 2**20:.2f} MiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=100_000)
    parser.add_argument("--keep", type=int, default=1000, help="records retention keeps")
    parser.add_argument("--every", type=int, default=5000, help="commits between compactions")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each (medians)")
    args = parser.parse_args()
    client = connect()
    retention = Retention(keep_records=args.keep)
    off_runs, on_runs = [], []
    for _ in range(args.rounds):
        off_runs.append(run(client, args.commits, None, args.every))
        on_runs.append(run(client, args.commits, retention, args.every))

    def median(runs: list[dict[str, int]], part: str) -> float:
        return statistics.median(r.get(part, 0) for r in runs)

    print(f"{args.commits} commits per workspace; retention keeps {args.keep} records, ")
    print(f"compacting every {args.every} commits; medians of {args.rounds} round(s)\n")
    print("| retention | log records | log | idempotency records | state | total |")
    print("|---|---|---|---|---|---|")
    for label, runs in (("off", off_runs), ("on", on_runs)):
        print(
            f"| {label} | {median(runs, 'log_records'):.0f} | {mib(median(runs, 'log'))} | "
            f"{mib(median(runs, 'idem'))} | {mib(median(runs, 'state'))} | "
            f"{mib(median(runs, 'total'))} |"
        )
    per_record = median(off_runs, "log") / max(1, median(off_runs, "log_records"))
    bound = (
        median(on_runs, "state") + median(on_runs, "idem") + (args.keep + args.every) * per_record
    )
    total_on, total_off = median(on_runs, "total"), median(off_runs, "total")
    print(f"\nlog bytes per record (retention off): {per_record:.0f}")
    print(
        f"stated bound with retention: state + idempotency + (keep + every) records = "
        f"{mib(bound)}: {'within' if total_on <= bound else 'EXCEEDED'}"
    )
    print(
        f"Headline: memory with retention / without: {total_on / total_off:.3f} "
        f"(log alone: {median(on_runs, 'log') / max(1, median(off_runs, 'log')):.3f})"
    )


if __name__ == "__main__":
    main()
