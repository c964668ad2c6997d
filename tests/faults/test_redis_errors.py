"""Every class of Redis error reaches the person at the command line as one line naming the
server, exit 2, never a traceback; each provoked for real: a port nothing listens on, a
server that accepts and never answers, a real redis-server out of memory, a real read-only
replica, real cluster nodes (MOVED from a node that does not hold the slot, CLUSTERDOWN
from one that holds none). The command runs in this process: what it says is the point, and
the servers are real."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from redis.exceptions import OutOfMemoryError

from bot.redis.connection import RedisTooOld, error_sentence
from tests.bot.cli.process import Ran, command
from tests.polling import wait_for
from tests.servers.redis_cluster import ClusterNode
from tests.servers.redis_process import RedisProcess
from tests.servers.refusing import refusing_port, refusing_ports

WRITE = ("state", "set", "decision.db", "postgres", "--actor", "user:a")


Deliberate = Callable[..., Ran]


@pytest.fixture
def deliberate(capsys: pytest.CaptureFixture[str]) -> Deliberate:
    """``deliberate --redis-url URL ARGV``, with no ``REDIS_URL`` in the environment."""

    def ran(url: str, *argv: str) -> Ran:
        argv = ("--workspace", "errors", "--redis-url", url, *argv)
        return command(capsys, *argv, env={"REDIS_URL": None})

    return ran


def one_line(done: Ran, server: str) -> str:
    """The command failed with exit 2 and said one line ending with the server's name."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("deliberate: ") and line.endswith(f"({server})"), line
    return line


@pytest.mark.parametrize("argv", [("state", "get", "decision.db"), ("state", "list")])
def test_connection_refused(deliberate: Deliberate, argv: tuple[str, ...]) -> None:
    with refusing_port() as port:  # held, never listening: no other server can take it
        line = one_line(
            deliberate(f"redis://ann:secret@127.0.0.1:{port}/0", *argv),
            f"redis://ann:***@127.0.0.1:{port}/0",
        )
    assert "cannot reach Redis" in line and "refused" in line and "secret" not in line


class SilentServer:
    """Accepts connections and never answers a byte."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.listener.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        self.listener.close()
        for held in self.held:
            held.close()


def test_timeout(deliberate: Deliberate) -> None:
    server = SilentServer()
    try:
        url = f"redis://127.0.0.1:{server.port}/0"
        done = deliberate(f"{url}?socket_timeout=0.2&socket_connect_timeout=0.2", *WRITE)
    finally:
        server.close()
    assert "Redis did not answer in time" in one_line(done, url)


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[RedisProcess | ClusterNode]]:
    started: list[RedisProcess | ClusterNode] = []
    yield started
    for server in started:
        server.stop()


def test_out_of_memory(
    deliberate: Deliberate, tmp_path: Path, servers: list[RedisProcess | ClusterNode]
) -> None:
    full = RedisProcess(tmp_path / "oom", "--maxmemory", "1mb", "--maxmemory-policy", "noeviction")
    servers.append(full)
    with pytest.raises(OutOfMemoryError):
        for i in range(10_000):
            full.client.set(f"fill:{i}", "x" * 10_000)
    line = one_line(deliberate(full.url, *WRITE), full.url)
    assert "out of memory" in line


def test_read_only_replica(
    deliberate: Deliberate, tmp_path: Path, servers: list[RedisProcess | ClusterNode]
) -> None:
    primary = RedisProcess(tmp_path / "primary")
    servers.append(primary)
    replica = RedisProcess(tmp_path / "replica", replica_of=primary)
    servers.append(replica)
    replica.wait_in_sync()
    line = one_line(deliberate(replica.url, *WRITE), replica.url)
    assert "read-only replica" in line


def test_moved_from_a_cluster_node_that_does_not_hold_the_slot(
    deliberate: Deliberate, tmp_path: Path, servers: list[RedisProcess | ClusterNode]
) -> None:
    holder, other = ClusterNode(tmp_path / "a"), ClusterNode(tmp_path / "b")
    servers += [holder, other]
    holder.client.execute_command("CLUSTER ADDSLOTS", *range(16384))
    other.client.execute_command("CLUSTER MEET", "127.0.0.1", holder.port)
    wait_for(lambda: other.client.cluster("info")["cluster_state"] == "ok", "the cluster's gossip")
    line = one_line(deliberate(other.url, *WRITE), other.url)
    assert "cluster node that does not hold the workspace's keys" in line
    assert f"is on 127.0.0.1:{holder.port}" in line
    assert f"REDIS_URL=redis+cluster://127.0.0.1:{holder.port}" in line
    # given as a cluster, the same node answers for the whole cluster: the write lands
    cluster_url = f"redis+cluster://{other.address}"
    done = deliberate(cluster_url, *WRITE)
    assert done.returncode == 0, done.stderr
    assert holder.client.hget("{ws:errors}:entry:decision.db", "value") == '"postgres"'


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("redis+cluster://", "a cluster URL names at least one host:port"),
        ("redis+cluster://127.0.0.1", "every node must be given as host:port"),
        ("redis+cluster://:pa@ss@127.0.0.1", "every node must be given as host:port"),
        ("redis+cluster://127.0.0.1:7000/3", "a Redis Cluster has one database, 0"),
    ],
)
def test_a_malformed_cluster_url_is_one_line(deliberate: Deliberate, url: str, said: str) -> None:
    done = deliberate(url, *WRITE)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("deliberate: ") and line.endswith(said), line


def test_a_cluster_with_no_node_answering_is_one_line(deliberate: Deliberate) -> None:
    with refusing_ports(2) as (one, two):
        url = f"redis+cluster://127.0.0.1:{one},127.0.0.1:{two}"
        line = one_line(deliberate(url, *WRITE), url)
    assert "the Redis cluster cannot serve this data now" in line


def test_a_password_is_never_shown_however_it_is_spelled(deliberate: Deliberate) -> None:
    """Unquoted "/", "?" and "@" in a password (base64 passwords hold "/"): still masked,
    and the URL's options (decode_responses among them) do not break the client."""
    with refusing_port() as port:
        hosts = f"127.0.0.1:{port}"
        url = f"redis+cluster://ops:s3/cr?t@x@{hosts}?decode_responses=false&socket_timeout=2"
        done = deliberate(url, *WRITE)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.endswith(f"(redis+cluster://ops:***@{hosts})"), line
    assert "s3" not in line and "cr?t" not in line


def test_clusterdown_from_a_cluster_node_without_slots(
    deliberate: Deliberate, tmp_path: Path, servers: list[RedisProcess | ClusterNode]
) -> None:
    node = ClusterNode(tmp_path / "alone")
    servers.append(node)
    line = one_line(deliberate(node.url, *WRITE), node.url)
    assert "cluster cannot serve" in line
    as_cluster = f"redis+cluster://{node.address}"  # the cluster client says it too
    line = one_line(deliberate(as_cluster, *WRITE), as_cluster)
    assert "cluster cannot serve" in line


def test_a_server_older_than_6_2_is_a_sentence_too() -> None:
    """No Redis older than 6.2 is at hand to start; the sentence is checked directly."""
    too_old = RedisTooOld("Redis 6.0.9 is too old: Deliberate needs Redis 6.2 or later")
    assert error_sentence(too_old) == str(too_old)
