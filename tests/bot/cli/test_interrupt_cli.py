"""Ctrl-C, as a terminal sends it (SIGINT to the whole foreground process group), ends a
command with exit 130 and one short line, never a traceback: while it waits, and a second
one while it winds down."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from tests.conftest import write_config
from tests.faults.embedded import cli
from tests.logs import said
from tests.rules.rig import config_text
from tests.servers.http import Request, Response
from tests.servers.webhook import HOOK, WebhookServer

DEADLINE_SEC = 60.0


class Live:
    """A ``deliberate`` process in a process group of its own, its output read as it comes."""

    def __init__(self, *argv: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot.main", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
            start_new_session=True,  # its own group, as a terminal's foreground job
        )
        self.lines: dict[str, list[str]] = {"stdout": [], "stderr": []}
        self._changed = threading.Condition()
        self._readers = [
            threading.Thread(target=self._read, args=(name, pipe), daemon=True)
            for name, pipe in (("stdout", self.proc.stdout), ("stderr", self.proc.stderr))
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, name: str, pipe: IO[str] | None) -> None:
        assert pipe is not None
        for line in pipe:
            with self._changed:
                self.lines[name].append(line.rstrip("\n"))
                self._changed.notify_all()

    def wait_for(self, name: str, wanted: Callable[[str], bool]) -> str:
        deadline = time.monotonic() + DEADLINE_SEC
        with self._changed:
            while True:
                found = next((line for line in self.lines[name] if wanted(line)), None)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise AssertionError(f"never on {name}: {self.lines}")
                self._changed.wait(min(left, 0.5))

    def ctrl_c(self) -> None:
        os.killpg(self.proc.pid, signal.SIGINT)

    def finish(self) -> int:
        code = self.proc.wait(timeout=DEADLINE_SEC)
        for reader in self._readers:
            reader.join(timeout=DEADLINE_SEC)
        return code

    def plain_stderr(self) -> list[str]:
        """What the command said on stderr in its own words, not its loggers' (``said``)."""
        return [words for line in self.lines["stderr"] if (words := said(line)) is not None]

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=DEADLINE_SEC)


def once(*argv: str) -> subprocess.CompletedProcess[str]:
    return cli(*argv, env=dict(os.environ), timeout=DEADLINE_SEC)


def waiting_on_lock(pid: int) -> bool:
    """``pid`` is blocked waiting for a ``flock`` (``/proc/locks`` marks waiters ``->``)."""
    locks = Path("/proc/locks").read_text(encoding="ascii").splitlines()
    return any("->" in line and line.split()[-4] == str(pid) for line in locks)


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs /proc/locks")
def test_ctrl_c_while_redis_stop_waits_exits_130_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with (home / "redis.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process is starting or stopping it
        live = Live("redis", "stop", env={"DELIBERATE_HOME": str(home)})
        try:
            deadline = time.monotonic() + DEADLINE_SEC
            while not waiting_on_lock(live.proc.pid):
                assert time.monotonic() < deadline and live.proc.poll() is None, live.lines
                time.sleep(0.01)  # polling a condition, with a deadline
            live.ctrl_c()
            assert live.finish() == 130
        finally:
            live.kill()
    assert live.lines["stderr"] == ["deliberate: interrupted"]


@pytest.fixture
def held_hook() -> Iterator[tuple[WebhookServer, threading.Event]]:
    """A webhook that answers only once released: a rule's step in progress."""
    release = threading.Event()

    def hold(request: Request) -> Response:
        release.wait(DEADLINE_SEC)
        return Response(200, {"ok": True})

    with WebhookServer() as hook:
        hook.route("POST", HOOK, hold)
        yield hook, release
        release.set()


def _worker_config(tmp_path: Path, hook: WebhookServer) -> str:
    rules = f"""
  - id: notify
    when: {{key: "decision.*", op: set}}
    then:
      - action: http.post
        args: {{url: "{hook.hook_url}", json: {{decided: "{{{{ mutation.value }}}}"}}}}
"""
    return str(write_config(tmp_path, config_text(rules)))


def test_ctrl_c_stops_an_idle_worker_with_130(workspace: str, tmp_path: Path) -> None:
    hook = WebhookServer()
    live = Live("--workspace", workspace, "--config", _worker_config(tmp_path, hook), "worker")
    try:
        live.wait_for("stdout", lambda line: line.startswith("deliberate worker: rules on"))
        live.ctrl_c()
        assert live.finish() == 130
    finally:
        live.kill()
    assert live.plain_stderr() == ["deliberate: interrupted"]
    assert all(json.loads(line) for line in live.lines["stderr"][:-1])  # the operator's log


def test_a_second_ctrl_c_while_the_worker_winds_down_exits_130_without_a_traceback(
    workspace: str, tmp_path: Path, held_hook: tuple[WebhookServer, threading.Event]
) -> None:
    hook, _ = held_hook
    config = _worker_config(tmp_path, hook)
    base = ("--workspace", workspace, "--config", config)
    ready = once(*base, "worker", "--burst")  # the rules' consumer group, at the log's end
    assert ready.returncode == 0, ready.stderr
    commit = once(*base, "state", "set", "decision.db", "pg", "--actor", "user:al")
    assert commit.returncode == 0, commit.stderr
    live = Live(*base, "worker")
    try:
        hook.wait_for_requests(1, timeout=DEADLINE_SEC)  # the rule's step is under way
        live.ctrl_c()  # RQ's warm shutdown: it waits for the step
        live.wait_for("stderr", lambda line: "warm shut down requested" in line)
        live.ctrl_c()  # and the person will not wait
        assert live.finish() == 130
    finally:
        live.kill()
    assert live.plain_stderr() == ["deliberate: interrupted"], live.lines
