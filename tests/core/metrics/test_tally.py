"""Counts are added in memory and sent to Redis in one transaction per flush: every count
arrives exactly once, whichever thread or process made it, whenever the flushing thread
runs; a flush that fails keeps its counts; a process sends what it has left at exit; a
forked child never sends its parent's counts again. Real Redis, real threads, real
processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import uuid
from collections import Counter as Tallied
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from redis import Redis
from redis.exceptions import RedisError

from bot.redis.connection import connect
from core.metrics import (
    COMMITS,
    REJECTIONS,
    RULE_STEPS,
    TURNS,
    Counter,
    Meter,
    counts_key,
    flush_all,
    read_counts,
    tally_for,
)
from core.metrics.tally import KEEP_SEC
from core.redis.client import RedisClient
from core.state.keys import WorkspaceKeys
from tests.core.metrics.counted import counted
from tests.servers.tcp_proxy import RedisProxy

SERIES: list[tuple[Counter, tuple[str, ...]]] = [
    (COMMITS, ()),
    (TURNS, ()),
    (REJECTIONS, ("conflict",)),
    (REJECTIONS, ("rate_limited",)),
    (RULE_STEPS, ("done",)),
]


@pytest.fixture
def other_client() -> Iterator[RedisClient]:
    """A second client of the same Redis: a tally of its own, as another process has."""
    client = connect()
    yield client
    client.close()


def new_workspace() -> str:
    return f"metrics-{uuid.uuid4().hex[:12]}"


def test_a_count_reaches_redis_with_an_expiry(redis_client: RedisClient) -> None:
    workspace = new_workspace()
    try:
        meter = Meter.of(redis_client, workspace)
        meter.count(COMMITS)
        meter.count(REJECTIONS, "conflict", amount=2)
        seen = counted(redis_client, workspace)
        assert seen.get(COMMITS) == 1 and seen.get(REJECTIONS, "conflict") == 2
        assert seen.get(REJECTIONS, "schema") == 0  # shown, at 0
        assert 0 < int(redis_client.ttl(counts_key(workspace))) <= KEEP_SEC
        assert counts_key(workspace).startswith(WorkspaceKeys(workspace).tag)  # its shard
    finally:
        redis_client.delete(counts_key(workspace))


@settings(max_examples=20, deadline=None)
@given(
    plan=st.lists(
        st.tuples(
            st.integers(0, 3), st.integers(0, len(SERIES) - 1), st.integers(1, 5), st.booleans()
        ),
        max_size=80,
    )
)
def test_counts_from_threads_and_clients_sum_exactly_whenever_they_are_flushed(
    redis_client: RedisClient, plan: list[tuple[int, int, int, bool]]
) -> None:
    """Four threads count on two clients (two processes' tallies), while a fifth flushes
    now and then, as the flushing thread does: after one more flush each series holds
    exactly the sum of what was counted."""
    workspace = new_workspace()
    second = connect()
    meters = [Meter.of(redis_client, workspace), Meter.of(second, workspace)]
    expected: Tallied[tuple[str, tuple[str, ...]]] = Tallied()
    for _, series, amount, _ in plan:
        counter, values = SERIES[series]
        expected[(counter.name, values)] += amount
    start = threading.Barrier(5)

    def count(thread: int) -> None:
        start.wait()
        for who, series, amount, on_second in plan:
            if who == thread:
                counter, values = SERIES[series]
                meters[int(on_second)].count(counter, *values, amount=amount)

    def flush_meanwhile() -> None:
        start.wait()
        for _ in range(5):
            flush_all([tally_for(redis_client), tally_for(second)])

    threads = [threading.Thread(target=count, args=(n,)) for n in range(4)]
    threads.append(threading.Thread(target=flush_meanwhile))
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seen = counted(redis_client, workspace)
        for counter, values in SERIES:
            assert seen.get(counter, *values) == expected[(counter.name, values)]
    finally:
        redis_client.delete(counts_key(workspace))
        second.close()


def test_a_flush_that_fails_keeps_its_counts_for_the_next(server_redis: Redis) -> None:
    workspace = new_workspace()
    with RedisProxy(server_redis) as proxy:
        through = proxy.client()
        meter = Meter.of(through, workspace)
        try:
            proxy.cut()
            meter.count(COMMITS, amount=3)
            with pytest.raises(RedisError):
                meter.tally.flush()  # (the flushing thread fails too, and keeps them)
            proxy.restore()
            meter.count(COMMITS)
            flush_all([meter.tally])
            assert read_counts(server_redis, workspace).get(COMMITS) == 4
        finally:
            server_redis.delete(counts_key(workspace))
            through.close()


def test_counts_with_nowhere_to_go_are_dropped_when_asked_and_nothing_is_said_at_exit(
    server_redis: Redis,
) -> None:
    """A process whose server went away says at exit how many series it could not send; a
    test session, whose own servers are gone by then, drops them first (tests/conftest.py),
    so nothing is printed after pytest's summary line."""
    code = (
        "import sys\n"
        "from redis import Redis\n"
        "from core.metrics import TURNS, Meter\n"
        "from core.metrics.tally import discard_unsent\n"
        "gone = Redis(host='127.0.0.1', port=int(sys.argv[1]), socket_connect_timeout=0.5)\n"
        "Meter.of(gone, 'w').count(TURNS, amount=7)\n"
        "if sys.argv[2] == 'discard':\n"
        "    print(discard_unsent())\n"
    )
    with RedisProxy(server_redis) as proxy:
        port = proxy.port
    said = {
        how: subprocess.run(
            [sys.executable, "-c", code, str(port), how],
            capture_output=True, text=True, check=True, timeout=120,
        )
        for how in ("keep", "discard")
    }  # fmt: skip
    assert "1 metric series not sent: ConnectionError" in said["keep"].stderr
    assert said["discard"].stdout.strip() == "1" and said["discard"].stderr == ""


def test_counts_dropped_while_a_flush_of_them_hangs_stay_dropped(server_redis: Redis) -> None:
    """The end of a test session: the flushing thread has taken the counts and waits on a
    server that does not answer when the session drops them; its failure does not put them
    back, so neither the thread nor the exit has anything to say. The thread, not this test,
    flushes (each second)."""
    code = (
        "import sys, time\n"
        "from redis import Redis\n"
        "from core.metrics import TURNS, Meter\n"
        "from core.metrics.tally import discard_unsent\n"
        "held = Redis(host='127.0.0.1', port=int(sys.argv[1]))\n"
        "meter = Meter.of(held, 'w')\n"
        "meter.count(TURNS, amount=7)\n"
        "while meter.tally.pending():\n"
        "    time.sleep(0.01)\n"
        "print(discard_unsent(), flush=True)\n"
        "time.sleep(3)\n"  # past the flush's timeout (2 s): it has failed by then
        "print(meter.tally.pending())\n"
    )
    with RedisProxy(server_redis) as proxy:
        proxy.freeze()  # connections open, nothing answered: the flush waits for its timeout
        done = subprocess.run(
            [sys.executable, "-c", code, str(proxy.port)],
            capture_output=True, text=True, check=True, timeout=120,
        )  # fmt: skip
        proxy.thaw()
    assert done.stdout.split() == ["0", "0"]
    assert "metric series not sent" not in done.stderr
    assert "counts not sent yet" not in done.stderr  # the thread's failure is moot: no word


def test_a_process_sends_its_counts_when_it_exits(redis_client: RedisClient) -> None:
    """No flush is asked for: the exit sends them (REDIS_URL is the suite's server)."""
    workspace = new_workspace()
    code = (
        "import sys\n"
        "from bot.redis.connection import connect\n"
        "from core.metrics import TURNS, Meter\n"
        "Meter.of(connect(), sys.argv[1]).count(TURNS, amount=7)\n"
    )
    try:
        subprocess.run([sys.executable, "-c", code, workspace], check=True, timeout=120)
        assert read_counts(redis_client, workspace).get(TURNS) == 7
    finally:
        redis_client.delete(counts_key(workspace))


def test_a_forked_child_sends_its_own_counts_never_its_parents(
    redis_client: RedisClient,
) -> None:
    """The parent's counts are not sent when the child is made (its flushes wait: the test
    holds the tally's sending lock, which the child must not inherit held)."""
    workspace = new_workspace()
    meter = Meter.of(redis_client, workspace)
    try:
        with meter.tally._sending:
            meter.count(COMMITS, amount=2)
            child = os.fork()
            if child == 0:  # the child: counts of its own, sent, and out without a word
                code = 1
                try:
                    signal.alarm(20)  # a lock held for ever ends the child, not the suite
                    meter.count(TURNS, amount=5)
                    code = 0 if flush_all() == 1 else 1
                finally:
                    os._exit(code)
        _, status = os.waitpid(child, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        seen = counted(redis_client, workspace)
        assert (seen.get(COMMITS), seen.get(TURNS)) == (2, 5)
    finally:
        redis_client.delete(counts_key(workspace))


def test_counting_needs_the_series_labels(redis_client: RedisClient) -> None:
    meter = Meter.of(redis_client, new_workspace())
    with pytest.raises(ValueError, match="reason"):
        meter.count(REJECTIONS)
    with pytest.raises(ValueError, match="workspace"):
        Meter.of(redis_client, "no spaces {here}")
