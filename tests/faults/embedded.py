"""The embedded Redis as the fault tests see it from outside: a fresh data directory per
test, the ``deliberate`` command run as a real process without ``REDIS_URL``, the
redis-server processes serving a directory, and a teardown that leaves none running."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from bot.redis.embedded import EmbeddedServer, alive
from tests.polling import wait_for

__all__ = [
    "COMMITTED",
    "Home",
    "cli",
    "serving",
]

# "committed: k = 3  (v3, user:p1, ...)", or for a retry whose value is no longer on record
# "committed: k (v3) (already committed: ...)"
COMMITTED = re.compile(r"^committed: (\S+) (?:= \S+\s+)?\(v(\d+)[,)]", re.MULTILINE)


def cli(
    *argv: str, env: dict[str, str], timeout: float = 120, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.main", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


class Home:
    """A fresh ``DELIBERATE_HOME`` and the environment of a command that uses it (no
    ``REDIS_URL``: the embedded server)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.server = EmbeddedServer(path)
        self.env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
        self.env["DELIBERATE_HOME"] = str(path)

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return cli(*argv, env=self.env)

    def pid(self) -> int:
        status = self.server.status()
        assert status is not None, "the embedded server does not answer"
        return int(status["pid"])

    def kill(self) -> int:
        """``kill -9`` of the server; returns once the process is gone."""
        pid = self.pid()
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not alive(pid), f"redis-server {pid} to die")
        return pid

    def stop_everything(self) -> None:
        for pid in serving(self.server.socket):
            os.kill(pid, signal.SIGKILL)
            wait_for(lambda pid=pid: not alive(pid), f"redis-server {pid} to die")
        self.server.socket.unlink(missing_ok=True)


def serving(socket: Path) -> list[int]:
    """The live redis-server processes listening on ``socket`` (redis names its socket in
    its process title), found with psutil when it is there, else in /proc."""
    try:
        import psutil
    except ImportError:
        return _serving_proc(socket)
    found = []
    for process in psutil.process_iter(["cmdline", "status"]):
        line = " ".join(process.info["cmdline"] or [])
        zombie = process.info["status"] == psutil.STATUS_ZOMBIE
        if "redis-server" in line and str(socket) in line and not zombie:
            found.append(process.pid)
    return found


def _serving_proc(socket: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, UnicodeDecodeError):
            continue
        if "redis-server" in line and str(socket) in line and alive(int(entry.name)):
            found.append(int(entry.name))
    return found
