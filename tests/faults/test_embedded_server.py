"""One embedded Redis per data directory, as real processes: many ``deliberate`` commands
started at once on a fresh directory share one server and lose no commit; a server killed
with ``kill -9`` in the middle of their commits loses none it acknowledged, and the next
command starts its replacement on the same append-only file."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable

from bot.redis.connection import embedded_client
from bot.redis.embedded import alive
from tests.faults.embedded import COMMITTED, Home, cli, serving
from tests.polling import wait_for

Run = Callable[..., subprocess.CompletedProcess[str]]


class Writers:
    """``n`` threads, each running ``deliberate state incr KEY`` ``m`` times in a row as its
    own processes; all start at once."""

    def __init__(self, run: Run, key: str, n: int, m: int) -> None:
        self.run, self.key, self.n, self.m = run, key, n, m
        self.results: list[subprocess.CompletedProcess[str]] = []
        self.acked: list[int] = []  # the versions acknowledged, one per "committed" line
        self._start = threading.Barrier(n)
        self._lock = threading.Lock()

    def _write(self, i: int) -> None:
        self._start.wait()
        for _ in range(self.m):
            quiet = ("--log-level", "WARNING", "--log-format", "text")
            done = self.run(*quiet, "state", "incr", self.key, "--actor", f"user:p{i}")
            with self._lock:
                self.results.append(done)
                if done.returncode == 0:
                    self.acked += [int(v) for _, v in COMMITTED.findall(done.stdout)]

    def __enter__(self) -> Writers:
        self.threads = [threading.Thread(target=self._write, args=(i,)) for i in range(self.n)]
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for thread in self.threads:
            thread.join(timeout=600)

    def count(self) -> int:
        with self._lock:
            return len(self.acked)


def history(run: Run, key: str) -> tuple[dict[str, object], list[int]]:
    """The key's entry and the versions of its log records."""
    got = run("state", "get", key, "--json")
    assert got.returncode == 0, got.stderr
    log = run("log", "--key", key, "--limit", "100000", "--json")
    assert log.returncode == 0, log.stderr
    return json.loads(got.stdout), [json.loads(line)["version"] for line in log.stdout.split()]


def assert_nothing_acknowledged_was_lost(run: Run, writers: Writers) -> None:
    entry, versions = history(run, writers.key)
    assert len(set(writers.acked)) == len(writers.acked), "a version acknowledged twice"
    assert versions == list(range(1, len(versions) + 1)), "the log skips or repeats a version"
    assert entry["value"] == entry["version"] == len(versions)
    assert set(writers.acked) <= set(versions)
    verify = run("replay", "--verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_processes_started_at_once_share_one_server_and_lose_nothing(
    embedded_home: Home,
) -> None:
    """Six processes race to start the server on a fresh directory, then six more commit
    at once on the one that won (each process costs ~0.4 s of CPU: two rounds are the race
    and the concurrent commits after it; more rounds repeat the second)."""
    n, m = 6, 2
    with Writers(embedded_home.run, "bench.p", n, m) as writers:
        pass
    failed = [r.stderr for r in writers.results if r.returncode != 0]
    assert failed == []
    assert len(writers.acked) == n * m
    assert_nothing_acknowledged_was_lost(embedded_home.run, writers)
    entry, _ = history(embedded_home.run, "bench.p")
    assert entry["value"] == n * m
    status = embedded_home.run("redis", "status", "--json")
    pid = json.loads(status.stdout)["pid"]
    assert serving(embedded_home.server.socket) == [pid]
    assert embedded_home.server.recorded_pid() == pid


def test_the_same_writers_against_the_session_redis(workspace: str) -> None:
    """The variant on a real server that is not embedded (``REDIS_URL`` of the session)."""
    env = {**os.environ, "DELIBERATE_WORKSPACE": workspace}
    assert env.get("REDIS_URL"), "the session fixture sets REDIS_URL"

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return cli(*argv, env=env)

    n, m = 6, 2
    with Writers(run, "bench.p", n, m) as writers:
        pass
    assert [r.stderr for r in writers.results if r.returncode != 0] == []
    assert len(writers.acked) == n * m
    assert_nothing_acknowledged_was_lost(run, writers)


def test_kill_9_of_the_server_mid_commits_loses_no_acknowledged_commit(
    embedded_home: Home,
) -> None:
    assert embedded_home.run("state", "incr", "bench.k", "--actor", "user:a").returncode == 0
    first = embedded_home.pid()
    # killed once four commits are acknowledged: at most twelve are still to come
    with Writers(embedded_home.run, "bench.k", 4, 4) as writers:
        wait_for(lambda: writers.count() >= 4, "the first acknowledged commits")
        embedded_home.kill()
    for done in writers.results:  # an error is fine while it is down; a traceback is not
        assert "Traceback" not in done.stderr, done.stderr
        if done.returncode != 0:
            assert done.stderr.strip().splitlines()[-1].startswith("deliberate: "), done.stderr
    assert len(writers.acked) >= 4
    assert_nothing_acknowledged_was_lost(embedded_home.run, writers)
    assert embedded_home.pid() != first
    assert serving(embedded_home.server.socket) == [embedded_home.pid()]


def test_a_killed_server_is_replaced_by_the_next_command_without_an_error(
    embedded_home: Home,
) -> None:
    run = embedded_home.run
    assert run("state", "set", "decision.db", "postgres", "--actor", "user:a").returncode == 0
    killed = embedded_home.kill()
    assert embedded_home.server.socket.exists()  # what kill -9 leaves behind: a dead socket
    status = run("redis", "status")
    assert status.returncode == 1 and "is not running" in status.stdout
    got = run("state", "get", "decision.db", "--json")
    assert (got.returncode, got.stderr) == (0, "")
    assert json.loads(got.stdout)["value"] == "postgres"
    assert serving(embedded_home.server.socket) == [embedded_home.pid()] != [killed]


def test_a_kill_9_then_commands_at_once_start_one_replacement(embedded_home: Home) -> None:
    """Four at once (one alone is the test above: it also names the server it replaced)."""
    concurrent = 4
    run = embedded_home.run
    assert run("state", "set", "decision.db", "postgres", "--actor", "user:a").returncode == 0
    embedded_home.kill()
    results: list[subprocess.CompletedProcess[str]] = []
    threads = [
        threading.Thread(target=lambda: results.append(run("state", "get", "decision.db")))
        for _ in range(concurrent)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert [(r.returncode, r.stderr) for r in results] == [(0, "")] * concurrent
    assert len(serving(embedded_home.server.socket)) == 1


def test_a_long_home_path_puts_the_socket_under_tmp(embedded_home: Home) -> None:
    deep = Home(embedded_home.path / ("d" * 60) / ("e" * 60))
    try:
        assert deep.run("state", "set", "decision.a", "one", "--actor", "user:a").returncode == 0
        assert str(deep.server.socket).startswith("/tmp/deliberate-")
        assert len(os.fsencode(deep.server.socket)) <= 107
        got = deep.run("state", "get", "decision.a", "--json")
        assert json.loads(got.stdout)["value"] == "one"
        pid = deep.pid()
        assert deep.run("redis", "stop").returncode == 0
        assert not alive(pid) and not deep.server.socket.exists()
    finally:
        deep.server.stop(force=True)
        deep.stop_everything()


def test_a_server_that_does_not_answer_yet_is_waited_for_not_doubled(
    embedded_home: Home,
) -> None:
    """A live server that does not answer (here stopped with SIGSTOP; in life, loading a
    large append-only file) is waited for: a second one on the same file is the bug."""
    run = embedded_home.run
    assert run("state", "set", "decision.db", "postgres", "--actor", "user:a").returncode == 0
    pid = embedded_home.pid()
    os.kill(pid, signal.SIGSTOP)
    try:
        status = run("redis", "status")
        assert status.returncode == 1 and f"(pid {pid}) runs but does not answer" in status.stdout
        reader = subprocess.Popen(
            [sys.executable, "-m", "bot.main", "state", "get", "decision.db"],
            env=embedded_home.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(lambda: lock_is_held(embedded_home), "the reader to take the lock and wait")
    finally:
        os.kill(pid, signal.SIGCONT)
    out, err = reader.communicate(timeout=120)
    assert (reader.returncode, err) == (0, "") and out.startswith("decision.db = ")
    assert serving(embedded_home.server.socket) == [pid]


def lock_is_held(home: Home) -> bool:
    with (home.path / "redis.lock").open("a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(lock, fcntl.LOCK_UN)
        return False


def test_a_long_running_client_reconnects_to_the_replacement(embedded_home: Home) -> None:
    """What a worker or a bot sees: its connection's server killed, its next command starts
    the replacement (on the same append-only file) and goes on."""
    client = embedded_client(embedded_home.path)
    try:
        client.set("kept", "yes")
        killed = embedded_home.kill()
        assert client.get("kept") == "yes"
        assert serving(embedded_home.server.socket) == [embedded_home.pid()] != [killed]
    finally:
        client.close()
