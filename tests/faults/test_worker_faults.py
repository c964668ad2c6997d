"""`deliberate worker` killed with kill -9 in the middle of a step, as real processes: nothing
of it lives on (RQ's scheduler child stops with it and frees the scheduler lock, so the next
worker becomes the scheduler), and the step's effect happens once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from bot.app import build_app
from core.state.actor import Actor
from core.state.commit_result import Committed
from core.state.mutation import Mutation, Op
from rules.keys import CONSUMER_GROUP, RuleKeys
from tests.polling import wait_for
from tests.rules.rig import config_text
from tests.servers.http import HttpServer, Request, Response

FAST = "  retries: 2\n  backoff_sec: [1]\n  timeout_sec: 20\n  lease_sec: 2\n"


class Receiver(HttpServer):
    """A webhook receiver that applies each ``Idempotency-Key`` once, as a real one would,
    and holds the first request until the test says go (so a worker can be killed while
    its step is started)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrived, self.go = threading.Event(), threading.Event()
        self.effects: dict[str, int] = {}  # idempotency key -> deliveries
        self.route("POST", "/hook", self._receive)

    def _receive(self, request: Request) -> Response:
        key = request.header("Idempotency-Key") or ""
        first = not self.effects
        self.effects[key] = self.effects.get(key, 0) + 1
        if first:
            self.arrived.set()
            self.go.wait(60)
        return Response(200, {"ok": True})


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as server:
        yield server
        server.go.set()


def group_of(pgid: int) -> list[int]:
    """The live processes (zombies hold nothing) of process group ``pgid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def children_of(pid: int) -> list[int]:
    return [p for p in group_of(pid) if p != pid and _ppid(p) == pid]


def _ppid(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat[stat.rindex(")") + 2 :].split()[1])


class Scheduler:
    """RQ's scheduler role for the workspace's queue: its lock, and the process holding it."""

    def __init__(self, client: Redis, queue: str) -> None:
        self.redis, self.lock = client, f"rq:scheduler-lock:{queue}"

    def holder(self) -> int | None:
        """The pid of the scheduler holding the lock, once it has registered."""
        name = self.redis.get(self.lock)
        pid = self.redis.hget(f"rq:scheduler:{name!s}", "pid") if name else None
        return int(pid) if pid else None


def start_worker(workspace: str, config: Path) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-m", "bot.main", "--workspace", workspace]
    return subprocess.Popen(
        [*args, "--config", str(config), "worker"],
        start_new_session=True,  # its own process group: its children are found by it
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop_worker(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_a_worker_killed_mid_step_leaves_no_orphan_and_its_step_happens_once(
    redis_client: Redis, workspace: str, tmp_path: Path, receiver: Receiver
) -> None:
    rules = f"""
  - id: tell_the_hook
    when: {{key: test.fault, op: set}}
    then:
      - action: http.post
        args: {{url: "{receiver.url}/hook", json: "{{{{ mutation.value }}}}"}}
"""
    config = tmp_path / "deliberate.yaml"
    config.write_text(config_text(rules, FAST), encoding="utf-8")
    app = build_app(workspace, config, client=redis_client)
    keys = RuleKeys(workspace)
    scheduler = Scheduler(redis_client, f"{app.config.automation.queue}.{workspace}")
    first = start_worker(workspace, config)
    second: subprocess.Popen[bytes] | None = None
    try:
        wait_for(
            lambda: (
                any(g["name"] == CONSUMER_GROUP for g in redis_client.xinfo_groups(keys.log))
                and scheduler.holder() in children_of(first.pid)
            ),
            what="the first worker and its scheduler child",
        )
        outcome = app.gateway.propose(
            Mutation(op=Op.SET, key="test.fault", value="once", actor=Actor.parse("user:mia"))
        )
        assert isinstance(outcome, Committed)
        corr = outcome.request.correlation_id
        assert receiver.arrived.wait(30), "the worker never reached the receiver"
        (job,) = [r["data"]["job"] for r in app.evaluations.for_correlation(corr) if r["data"]]
        assert '"started"' in str(redis_client.hget(keys.steps(job), "0"))

        os.kill(first.pid, signal.SIGKILL)  # the worker alone, as an OOM killer would
        first.wait()
        wait_for(lambda: group_of(first.pid) == [], what="the killed worker's children")
        wait_for(lambda: not redis_client.exists(scheduler.lock), what="a free scheduler lock")

        receiver.go.set()
        second = start_worker(workspace, config)
        wait_for(
            lambda: scheduler.holder() in children_of(second.pid),
            what="the second worker to become the scheduler",
        )
        events = wait_for(
            lambda: [
                r
                for r in app.evaluations.for_correlation(corr)
                if r["event"] in ("action.done", "action.failed")
            ],
            what="the step to be settled",
        )
    finally:
        receiver.go.set()
        for proc in (first, second):
            if proc is not None:
                stop_worker(proc)
    ((event, data),) = [(r["event"], r["data"]) for r in events]
    assert list(receiver.effects) == [f"{job}.0"]  # one effect, whatever was resent
    if event == "action.done":  # http.post is resend-safe: sent again with the same key
        assert data["result"] == {"status": 200}
    else:
        assert "outcome unknown" in data["error"]
    assert group_of(second.pid) == []  # a worker stopped as usual takes its scheduler along
