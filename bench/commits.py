"""Run `deliberate bench commits` in the configurations the README quotes and print a
Markdown table: hot key (K=1) and distinct keys (K=N), with and without a fresh read before
each CAS. Each configuration measures its own baselines in the same run, in rounds alternating
with the commits: the commit script's writes made by hand in one MULTI/EXEC pipeline, and a
raw SET."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import uuid
from typing import Any

from bot.app import build_app
from core.state.keys import WorkspaceKeys


def run(writers: int, ops: int, keys: int, reread: bool, keep: bool) -> dict[str, object]:
    workspace = f"bench-{uuid.uuid4().hex[:8]}"
    argv = [
        sys.executable,
        "-m",
        "bot.main",
        "--workspace",
        workspace,
        "bench",
        "commits",
        "--writers",
        str(writers),
        "--ops",
        str(ops),
        "--keys",
        str(keys),
        "--json",
    ]
    if reread:
        argv.append("--reread")
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=True)
    finally:
        if not keep:
            _delete(workspace)
    report: dict[str, object] = json.loads(done.stdout)
    return report


def _delete(workspace: str) -> None:
    app = build_app(workspace)
    names = list(app.redis.scan_iter(match=WorkspaceKeys(workspace).every_key, count=1000))
    if names:
        app.redis.delete(*names)


def row(label: str, r: dict[str, Any]) -> str:
    ours, hand, raw = r["gateway"], r["by_hand"], r["raw_set"]
    h, x = r["ratio_by_hand"], r["ratio"]
    return (
        f"| {label} | {ours['ops_per_sec']:.0f} | {hand['ops_per_sec']:.0f} | "
        f"**{h['throughput']:.2f}** | {ours['p50_ms']:.3f} | {hand['p50_ms']:.3f} | "
        f"**{h['p50_latency']:.2f}** | {raw['ops_per_sec']:.0f} | {x['throughput']:.2f} | "
        f"{raw['p50_ms']:.3f} | {x['p50_latency']:.2f} | {ours['p99_ms']:.2f} | "
        f"{hand['p99_ms']:.2f} | {ours['conflicts']} |"
    )


def verdict(report: dict[str, Any]) -> str:
    """The headline, on distinct keys without a re-read (the one like-for-like configuration:
    the writes by hand neither conflict nor re-read): the ratios against the writes by hand
    and whether they meet the targets (p50 at most 1.1x the pipeline's, throughput 0.9x)."""
    p50, rate = report["ratio_by_hand"]["p50_latency"], report["ratio_by_hand"]["throughput"]
    met = "met" if p50 <= 1.1 and rate >= 0.9 else "not met"
    return (
        f"commit / writes by hand, distinct keys: p50 {p50:.2f} (target <= 1.1), "
        f"throughput {rate:.2f} (target >= 0.9): {met}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="keep the bench workspaces")
    args = parser.parse_args()
    n = args.writers
    print(
        f"{n} writer processes x {args.ops} successful increments each; ratios are the "
        "commit's / the same writes by hand (one MULTI/EXEC pipeline) and / raw SET, "
        "measured in the same run\n"
    )
    print(
        "| configuration | commits/s | by hand/s | throughput ratio | p50 commit ms "
        "| p50 by hand ms | p50 ratio | SET/s | throughput / SET | p50 SET ms | p50 / SET "
        "| p99 commit ms | p99 by hand ms | conflicts |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    reports = []
    for keys, reread, label in [
        (n, False, f"distinct keys (K={n})"),
        (n, True, f"distinct keys (K={n}), re-read before each CAS"),
        (1, False, "one hot key (K=1)"),
        (1, True, "one hot key (K=1), re-read before each CAS"),
    ]:
        reports.append(run(n, args.ops, keys, reread, args.keep))
        print(row(label, reports[-1]), flush=True)
    print(f"\n{verdict(reports[0])}")


if __name__ == "__main__":
    main()
