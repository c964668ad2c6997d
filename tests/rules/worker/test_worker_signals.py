"""A Ctrl-C (or a SIGTERM) that reaches the worker while RQ starts it, at the worst moment:
the scheduler child just forked, RQ's handlers not yet in place, and the loop whose end stops
the scheduler not yet begun. The worker ended with its scheduler child still running, and
its exit waited for that child for good (``deliberate worker`` hung after a Ctrl-C pressed
as it started), or the child, which had Python's handler, printed a traceback. Now the
signal waits for the loop, which stops both. The worker runs in a process of its own
(``pressed_as_it_starts.py``): the scheduler is a fork of it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from redis import Redis

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_before_rq_s_loop_stops_the_worker_and_its_scheduler(
    single_redis_url: str, signum: signal.Signals
) -> None:
    name = f"test-signals-{uuid.uuid4().hex[:8]}"
    argv = [sys.executable, "-m", "tests.rules.worker.pressed_as_it_starts"]
    try:
        done = subprocess.run(
            [*argv, single_redis_url, name, str(int(signum))],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        with Redis.from_url(single_redis_url) as redis:
            stale = list(redis.scan_iter(match=f"rq:*{name}*"))
            if stale:
                redis.delete(*stale)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.splitlines()[-1])  # (after RQ's own lines)
    assert said == {
        "worked": False,
        "forked": True,
        "alive": False,  # stopped with the worker, freeing its lock
        "exitcode": 0,
        "interrupted": signum == signal.SIGINT,
        "restored": True,  # the handlers put back as found
        "locked": False,
    }
    assert "Traceback" not in done.stderr, done.stderr
