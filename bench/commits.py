"""Run `deliberate bench commits` in the configurations the README quotes and print a
Markdown table: hot key (K=1) and distinct keys (K=N), with and without a fresh read before
each CAS. Each configuration measures its own raw-SET baseline in the same run."""

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
    ours, raw, x = r["gateway"], r["raw_set"], r["ratio"]
    return (
        f"| {label} | {ours['ops_per_sec']:.0f} | {raw['ops_per_sec']:.0f} | "
        f"**{x['throughput']:.2f}** | {ours['p50_ms']:.3f} | {raw['p50_ms']:.3f} | "
        f"**{x['p50_latency']:.2f}** | {ours['p99_ms']:.2f} | {raw['p99_ms']:.2f} | "
        f"{ours['conflicts']} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="keep the bench workspaces")
    args = parser.parse_args()
    n = args.writers
    print(
        f"{n} writer processes x {args.ops} successful increments each; "
        "ratios are ours / raw SET, measured in the same run\n"
    )
    print(
        "| configuration | commits/s | SET/s | throughput ratio | p50 commit ms | p50 SET ms "
        "| p50 ratio | p99 commit ms | p99 SET ms | conflicts |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for keys, reread, label in [
        (n, False, f"distinct keys (K={n})"),
        (n, True, f"distinct keys (K={n}), re-read before each CAS"),
        (1, False, "one hot key (K=1)"),
        (1, True, "one hot key (K=1), re-read before each CAS"),
    ]:
        print(row(label, run(n, args.ops, keys, reread, args.keep)), flush=True)


if __name__ == "__main__":
    main()
