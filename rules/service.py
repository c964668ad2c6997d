"""The rule consumer's loop: read the mutation log as the group, let the engine handle each
record, acknowledge it; fire due ``for`` timers; and its chores, each every so often: put
back runs whose worker died, delete dead consumers and stale timer causes, give old runs
sets a TTL. ``every`` adds a chore (the composition root adds its own upkeep there)."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rq import Queue

from core.state.mutation_log import LogRecord, UnreadableRecord
from rules.engine.consumer import LogConsumer
from rules.engine.engine import Engine
from rules.worker.reaper import requeue_abandoned

__all__ = ["Chore", "RuleService", "run_due"]

_log = logging.getLogger("deliberate.rules")
MAX_DELIVERIES = 3
REAP_EVERY_SEC = 1.0
UPKEEP_EVERY_SEC = 600.0
SWEEP_EVERY_SEC = 86_400.0


@dataclass
class Progress:
    handled: int = 0
    started: int = 0


@dataclass
class Chore:
    """A task the consumer loop runs every ``every_sec`` seconds, the first time at its
    first pass. One that fails is logged and tried again at its next turn."""

    name: str
    every_sec: float
    task: Callable[[], object]
    due: float = field(default=0.0)  # time.monotonic() of its next turn


def run_due(chores: list[Chore]) -> None:
    """Run each of ``chores`` whose turn has come; one that fails is logged."""
    for chore in chores:
        now = time.monotonic()
        if now < chore.due:
            continue
        chore.due = now + chore.every_sec
        try:
            chore.task()
        except Exception:  # a Redis blip: its next turn tries again
            _log.exception("rules: the chore %r failed", chore.name)


class RuleService:
    def __init__(
        self,
        engine: Engine,
        queue: Queue,
        *,
        name: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``clock``: seconds since the epoch, when ``for`` timers are due (tests set it)."""
        self.engine = engine
        self.clock = clock
        self.queue = queue
        lease_sec = engine.book.automation.lease_sec
        self.consumer = LogConsumer(
            engine.store.redis,
            engine.keys,
            name or f"{socket.gethostname()}:{os.getpid()}",
            claim_idle_ms=lease_sec * 3000,
        )
        self.lease_sec = lease_sec
        self.progress = Progress()
        self.chores: list[Chore] = []
        self.every(REAP_EVERY_SEC, "requeue abandoned runs", self._reap)
        self.every(UPKEEP_EVERY_SEC, "delete dead consumers and timer causes", self._upkeep)
        self.every(SWEEP_EVERY_SEC, "give old runs sets a TTL", self._sweep)

    def every(self, seconds: float, name: str, task: Callable[[], object]) -> Chore:
        """Run ``task`` every ``seconds`` from the consumer loop (the first time at once)."""
        chore = Chore(name, seconds, task)
        self.chores.append(chore)
        return chore

    def start(self) -> None:
        if self.consumer.ensure_group():
            _log.info("rules: consumer group created at the end of the mutation log")

    def step(self, block_ms: int | None = None) -> int:
        """One pass: new records (waiting up to ``block_ms`` for one), due timers, and now
        and then abandoned runs. The number of records handled and timers fired."""
        done = 0
        for record in self.consumer.read(block_ms=block_ms):
            if isinstance(record, UnreadableRecord):  # settled at once: it will never parse
                self._unreadable(record)
                self.consumer.ack(record.log_id)
                done += 1
                continue
            try:
                self.progress.started += self.engine.handle(record)
            except Exception as exc:
                if not self._give_up(record, exc):
                    continue  # left pending: claimed again later, when Redis may be back
            self.consumer.ack(record.log_id)
            done += 1
        self.progress.handled += done
        fired = self.engine.tick(int(self.clock() * 1000))
        self.progress.started += fired
        self._chores()
        return done + fired

    def _chores(self) -> None:
        run_due(self.chores)

    def _reap(self) -> None:
        engine = self.engine
        requeue_abandoned(
            self.queue, engine.store.redis, engine.keys, self.lease_sec, engine.evaluations
        )

    def _upkeep(self) -> None:
        dead = self.consumer.prune()
        if dead:
            _log.info("rules: deleted dead consumers %s", ", ".join(dead))
        self.engine.timers.sweep()

    def _sweep(self) -> None:
        """A SCAN of the keyspace: once a day per workspace, whichever worker comes first."""
        engine = self.engine
        if engine.store.redis.set(engine.keys.swept, "1", nx=True, ex=int(SWEEP_EVERY_SEC)):
            engine.runs.sweep()

    def _give_up(self, record: LogRecord, exc: Exception) -> bool:
        """After ``MAX_DELIVERIES`` failed attempts a record is recorded as an error and
        acknowledged, so that one bad record cannot hold back the ones after it."""
        deliveries = self.consumer.deliveries(record.log_id)
        _log.exception("rules: handling %s failed (attempt %d)", record.log_id, deliveries)
        if deliveries < MAX_DELIVERIES:
            return False
        m = record.mutation
        # (its message may quote a value of state: the worker's log has it, the record not)
        why = f"handling failed {deliveries} times, given up: {type(exc).__name__}"
        data = {
            "rule": None,
            "fired": False,
            "why": self.engine.book.mask(why, self.engine.book.secrets(record, {})),
            "logId": record.log_id,
        }
        self.engine.evaluations.record(m.correlation_id, m.key, "error", data)
        return True

    def _unreadable(self, record: UnreadableRecord) -> None:
        """Recorded as an error evaluation (``rules why`` and ``trace`` show it), so that
        one bad record never holds back the ones after it."""
        _log.error("rules: %s; acknowledged without running any rule", record)
        data = {"rule": None, "fired": False, "why": str(record), "logId": record.log_id}
        self.engine.evaluations.record("-", "", "error", data)

    def drain(self) -> int:
        """Handle everything there is now; the number of records handled and timers fired."""
        total = 0
        while (done := self.step()) > 0:
            total += done
        return total

    def run(self, stop: threading.Event, block_ms: int = 500) -> None:
        self.start()
        while not stop.is_set():
            try:
                self.step(block_ms=block_ms)
            except Exception:  # a Redis blip must not end the worker: log it and go on
                _log.exception("rules: the consumer loop failed; retrying in a second")
                stop.wait(1.0)
