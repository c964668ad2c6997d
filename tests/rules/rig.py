"""A rule engine on real Redis and a real RQ queue, with the shipped policy and the rules a
test gives; jobs run in this process through RQ's own worker (``work``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from redis import Redis
from rq import Queue, SimpleWorker

from bot.app import App, build_app
from bot.redis.connection import connection_url
from connectors.registry import default_registry
from core.state.actor import Actor
from core.state.commit_result import Committed
from core.state.mutation import Mutation, Op
from core.state.mutation_log import LogRecord
from rules.engine.engine import Engine
from rules.service import RuleService
from rules.worker.context import WorkerContext, install

SHIPPED = files("core.config").joinpath("default.yaml").read_text(encoding="utf-8")
POLICY_EXTRA = """
    - pattern: "test.*"
      description: keys of the rule tests
"""


def config_text(rules_yaml: str, automation: str = "", keys: str = "") -> str:
    """The shipped config with its rules replaced, and ``test.*`` keys allowed (and the
    policy patterns ``keys``, first)."""
    head = SHIPPED.split("\nrules:\n")[0]
    head = head.replace("  keys:\n", "  keys:\n" + keys + POLICY_EXTRA.lstrip("\n"), 1)
    if automation:
        head = head.split("\nautomation:\n")[0] + "\nautomation:\n" + automation
    return head + "\nrules: !replace\n" + rules_yaml


@dataclass
class Clock:
    """The rule service's clock: the real time, or a moment a test sets (``at_ms``), so a
    ``for`` timer's second passes without sleeping through it."""

    at_ms: int | None = None

    def __call__(self) -> float:
        return time.time() if self.at_ms is None else self.at_ms / 1000


@dataclass
class Rig:
    app: App
    queue: Queue
    engine: Engine
    service: RuleService
    env: dict[str, str]
    clock: Clock
    config_path: Path

    def commit(
        self, op: str, key: str, value: Any = None, who: str = "moderator:mia", **fields: Any
    ) -> Committed:
        actor = Actor.parse(who)
        outcome = self.app.gateway.propose(
            Mutation(op=Op(op), key=key, value=value, actor=actor, **fields)
        )
        assert isinstance(outcome, Committed), outcome
        return outcome

    def work(self) -> None:
        """Handle every new log record, then run every queued job, until nothing is left."""
        worker = SimpleWorker([self.queue], connection=self.queue.connection)
        while True:
            handled = self.service.drain()
            queued = len(self.queue) > 0
            if queued:
                worker.work(burst=True)
            if not handled and not queued:
                return

    def evaluations(self, event: str | None = None) -> list[dict[str, Any]]:
        rows = self.app.evaluations._rows(100_000)
        return [r for r in rows if event is None or r["event"] == event]

    def last_record(self, key: str) -> LogRecord:
        return self.app.log.latest(1, key=key)[-1]

    def wait_until(self, predicate: Any, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError("timed out waiting")
            self.service.step()
            time.sleep(0.05)


def make_rig(
    tmp_path: Path,
    client: Redis,
    workspace: str,
    rules_yaml: str,
    env: dict[str, str] | None = None,
    automation: str = "",
    keys: str = "",
) -> Rig:
    path = tmp_path / "rules.yaml"
    path.write_text(config_text(rules_yaml, automation, keys), encoding="utf-8")
    env = dict(env or {})
    import os

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # ${NAME} resolves from the process environment at load
    try:
        app = build_app(workspace, path, client=client)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    # RQ needs one server: on a cluster run, the session's (DELIBERATE_QUEUE_URL)
    queue_url = os.environ.get("DELIBERATE_QUEUE_URL") or connection_url(client)
    queue = Queue(f"test.{workspace}", connection=Redis.from_url(queue_url))
    book = app.rules
    install(WorkerContext(app.redis, app.gateway, book, default_registry(), env))
    engine = Engine(app.store, book, queue)
    clock = Clock()
    service = RuleService(engine, queue, clock=clock)
    service.start()
    return Rig(app, queue, engine, service, env, clock, path)
