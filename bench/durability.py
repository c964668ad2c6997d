"""What ``appendfsync always`` (the embedded server's setting: an acknowledged commit is in
the append-only file, fsynced, before Redis replies) costs against ``everysec`` (Redis's
default: up to a second of acknowledged writes can be lost).

``deliberate bench commits`` (gateway commits, and raw ``SET`` round trips as its own
baseline) against one embedded server, switched between the two settings with CONFIG SET
in rounds that alternate (each first in turn). The cost depends on the disk: run it where
DELIBERATE_HOME lives (``--dir``); on tmpfs an fsync is free.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bot.redis.embedded import EmbeddedServer

MODES = ("always", "everysec")


def bench(
    env: dict[str, str], writers: int, ops: int, workspace: str | None = None
) -> dict[str, Any]:
    """``deliberate bench commits --json`` (one key per writer) run with ``env``: its report.
    Also what ``bench/cluster.py`` runs."""
    argv = [sys.executable, "-m", "bot.main"]
    argv += ["--workspace", workspace] if workspace else []
    argv += ["bench", "commits", "--json"]
    argv += ["--writers", str(writers), "--ops", str(ops), "--keys", str(writers)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        where = env.get("REDIS_URL") or "the embedded server"
        raise SystemExit(f"bench commits failed on {where}: {done.stderr.strip()}")
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=1, help="writer processes (1)")
    parser.add_argument("--ops", type=int, default=500, help="commits per writer (500)")
    parser.add_argument("--rounds", type=int, default=4, help="alternating rounds (4)")
    parser.add_argument("--dir", default=None, help="where the data directory goes")
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="deliberate-durability-", dir=args.dir))
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["DELIBERATE_HOME"] = str(home)
    server = EmbeddedServer(home)
    rows: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    try:
        server.ensure_running()
        for round_ in range(args.rounds):
            for mode in MODES[round_ % 2 :] + MODES[: round_ % 2]:
                server.probe().config_set("appendfsync", mode)
                rows[mode].append(bench(env, args.writers, args.ops))
    finally:
        server.stop(force=True)
        shutil.rmtree(home, ignore_errors=True)

    def median(mode: str, side: str, field: str) -> float:
        return statistics.median(float(r[side][field]) for r in rows[mode])

    print(f"{args.writers} writer(s) x {args.ops} commits, {args.rounds} rounds, data in {home}")
    print("| appendfsync | commits/s | commit p50 ms | commit p99 ms | raw SET p50 ms |")
    print("|---|---|---|---|---|")
    for mode in MODES:
        print(
            f"| {mode} | {median(mode, 'gateway', 'ops_per_sec'):.0f} | "
            f"{median(mode, 'gateway', 'p50_ms'):.3f} | {median(mode, 'gateway', 'p99_ms'):.2f} "
            f"| {median(mode, 'raw_set', 'p50_ms'):.3f} |"
        )
    ratio = median("always", "gateway", "p50_ms") / median("everysec", "gateway", "p50_ms")
    print(f"commit p50, always / everysec: {ratio:.2f}")


if __name__ == "__main__":
    main()
