"""A Redis Cluster losing the primary of a workspace's slot in the middle of concurrent
commits: the primary is killed with SIGKILL, its replica is promoted, and the committers,
each with a cluster client of its own, carry on by themselves. Every commit acknowledged
before, during and after the failover is in the log once, none twice, nothing else is, and
``replay --verify`` passes. The time from the kill until the promoted replica acknowledges
a commit is reported, with the longest any commit waited."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app import build_app
from bot.redis.connection import connect
from core.gateway.outcome import Outcome
from core.state.commit_result import Committed
from core.state.keys import WorkspaceKeys
from core.state.mutation_log import MutationLog
from tests.conftest import write_config
from tests.factories import mutation
from tests.faults.embedded import cli
from tests.polling import wait_for
from tests.servers.redis_cluster import LocalCluster

WORKSPACE = "failover"
KEY = "counter.n"
# a commit is acknowledged once the replica holds it; one cut off is sent again for a minute
CONFIG = """
store:
  replicas:
    wait_for: 1
    timeout_ms: 10000
  commit_retry_sec: 60
policy:
  keys:
    - pattern: "counter.*"
      type: integer
"""


class Committers:
    """``n`` threads, each with a cluster client and an app of its own, incrementing one
    key through the gateway until stopped; each acknowledged commit is kept with the
    monotonic times it was sent and acknowledged."""

    def __init__(self, url: str, config: Path, n: int) -> None:
        self.apps = [build_app(WORKSPACE, config, client=connect(url)) for _ in range(n)]
        self.acked: list[tuple[str, float, float]] = []
        self.failures: list[BaseException | Outcome] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._commit, args=(i,), name=f"committer-{i}")
            for i in range(n)
        ]

    def _commit(self, i: int) -> None:
        gateway = self.apps[i].gateway
        while not self._stop.is_set():
            change = mutation("incr", KEY, 1, who=f"user:c{i}")
            sent = time.monotonic()
            try:
                outcome = gateway.propose(change)
            except BaseException as error:  # kept for the assertion, never swallowed
                with self._lock:
                    self.failures.append(error)
                return
            with self._lock:
                if isinstance(outcome, Committed):
                    self.acked.append((change.id, sent, time.monotonic()))
                else:
                    self.failures.append(outcome)

    def count(self, since: float = 0.0) -> int:
        """Commits sent after ``since`` and acknowledged."""
        with self._lock:
            return sum(1 for _, sent, _ in self.acked if sent > since)

    def first_sent_after(self, moment: float) -> float | None:
        """When the first commit sent after ``moment`` was acknowledged: one sent after the
        primary's death can only be acknowledged by the replica that took its place."""
        with self._lock:
            return min((acked for _, sent, acked in self.acked if sent > moment), default=None)

    def longest(self) -> float:
        with self._lock:
            return max(acked - sent for _, sent, acked in self.acked)

    def __enter__(self) -> Committers:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=120)
        for app in self.apps:
            app.redis.close()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    # a primary silent for a second is judged failed and one of its replicas takes over; the
    # other follows the promoted one, so a commit can still wait for a replica
    cluster = LocalCluster(tmp_path / "cluster", masters=3, replicas=2, node_timeout_ms=1000)
    yield cluster
    cluster.stop()


def test_a_primary_killed_during_commits_loses_no_acknowledged_commit_and_none_twice(
    cluster: LocalCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path, CONFIG)
    slot_key = WorkspaceKeys(WORKSPACE).versions
    with Committers(cluster.url, config, n=4) as committers:
        wait_for(lambda: committers.count() >= 40 or committers.failures, "commits before")
        dead, killed_at = cluster.kill_primary_of(slot_key)
        wait_for(lambda: committers.count(killed_at) >= 40 or committers.failures, "after", 90)
        promoted = cluster.wait_promoted(slot_key, instead_of=dead)
    assert committers.failures == [], [str(f) for f in committers.failures]
    first = committers.first_sent_after(killed_at)
    assert first is not None
    with capsys.disabled():
        print(
            f"\nfailover: the primary of {WORKSPACE!r} killed; {first - killed_at:.2f} s "
            f"later the replica promoted on port {promoted.port} acknowledged a commit; the "
            f"longest commit took {committers.longest():.2f} s"
        )

    client = connect(cluster.url)
    try:
        log = MutationLog(client, WorkspaceKeys(WORKSPACE))
        ids = [record.mutation.id for record in log.records()]
        acked = [mutation_id for mutation_id, _, _ in committers.acked]
        assert len(ids) == len(set(ids)), "a commit is in the log twice"
        assert set(ids) == set(acked), "the log and the acknowledged commits differ"
        assert client.hget(WorkspaceKeys(WORKSPACE).entry(KEY), "value") == str(len(acked))
    finally:
        client.close()
    env = {**os.environ, "REDIS_URL": cluster.url}
    verify = cli("--workspace", WORKSPACE, "replay", "--verify", env=env)
    assert verify.returncode == 0, verify.stderr
