"""The benchmarks still run: each script, with tiny settings, as a real process. Nothing here
times anything (figures come from the scripts themselves); it checks that they finish and
print their headline, so a change in the core cannot leave a bench broken unnoticed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent.parent / "bench"

# One thread for the math libraries of a bench that uses numpy (embedding_extras.py): the
# suite runs more workers than CPUs, and OpenBLAS's threads, one per CPU, spin against them (its
# bench took 12.7 s of CPU with them, 3.2 s with one, and printed the same figures).
ONE_THREAD = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


# Each with the smallest settings that still run every path it measures (two writers: keys of
# their own; two runs: a p90; one round of durability.py runs both modes; Discord unsharded
# and sharded): a bench's figures are its own business, here it must finish and say them.
@pytest.mark.parametrize(
    ("script", "args", "headline"),
    [
        ("turn_overhead.py", ["--reps", "1", "--runtime-reps", "1"], "pure turn overhead"),
        (
            "turn_overhead.py",
            ["--reps", "1", "--runtime-reps", "1", "--cluster"],
            "at most 2 (target <= 3: met)",
        ),
        ("prompt_size.py", ["--budgets", ""], "Headline, messages: turn 50 / turn 1"),
        ("classifier_accuracy.py", ["--details"], "real written chat (IRC, held out), in context"),
        ("team_adaptation.py", ["--rate", "0.1"], "| all 14 | 1385 |"),
        ("walks.py", [], '| a "Use this" click |'),
        ("embedding_extras.py", ["--no-curve"], "test (held out)"),
        ("replay.py", ["--mutations", "300", "--keys", "20", "--rounds", "1"], "deliberate replay"),
        ("instructions.py", ["--worker", "commit", "--ops", "3"], "3 commits made"),
        (
            "rule_matching.py",
            ["--unrelated", "100", "--rounds", "2", "--reps", "2"],
            "100 unrelated rules / 10 rules",
        ),
        ("commits.py", ["--writers", "2", "--ops", "4"], "commit / writes by hand, distinct keys"),
        ("commit_to_action.py", ["--mutations", "3"], "commit-to-action median"),
        ("lua_calls.py", ["--rounds", "3", "--reps", "5"], "Script / LuaScript"),
        ("undo_click.py", ["--clicks", "2"], "known 1, early 2, along 2"),
        ("startup.py", ["--runs", "2"], "state get / import redis, pydantic"),
        ("durability.py", ["--rounds", "1", "--ops", "5"], "commit p50, always / everysec"),
        (
            "cluster.py",
            ["--writers", "1", "--ops", "50", "--rounds", "1"],
            "the bench finished all 50 increments",
        ),
        (
            "growth.py",
            ["--commits", "300", "--keep", "50", "--every", "100"],
            "memory with retention / without",
        ),
        (
            "load.py",
            [
                *("--workspaces", "5", "--events", "20", "--discord-events", "16"),
                *("--senders", "2", "--replicas", "2", "--discord", "--discord-shards", "0,2"),
            ],
            "Headline, Discord, 2 shards",
        ),
        ("redaction.py", ["--rounds", "2", "--reps", "1"], "Headline: new / old redactor"),
        (
            "state_pages.py",
            ["--keys", "300", "--rounds", "2", "--reps", "2"],
            "Headline, 300 keys: State page / whole read",
        ),
        (
            "key_history.py",
            ["--records", "300", "--rounds", "2", "--reps", "2"],
            "whole log / bounded log of an old key",
        ),
    ],
)
def test_a_bench_runs(redis_client: object, script: str, args: list[str], headline: str) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        capture_output=True,
        text=True,
        env=os.environ | ONE_THREAD,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert headline in done.stdout
