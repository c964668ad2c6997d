"""The rule consumer's loop: read the mutation log as the group, let the engine handle each
record, acknowledge it; fire due ``for`` timers; put back runs whose worker died."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from dataclasses import dataclass

from rq import Queue

from rules.consumer import LogConsumer
from rules.engine import Engine
from rules.reaper import requeue_abandoned

__all__ = ["RuleService"]

_log = logging.getLogger("deliberate.rules")


@dataclass
class Progress:
    handled: int = 0
    started: int = 0


class RuleService:
    def __init__(self, engine: Engine, queue: Queue, *, name: str | None = None) -> None:
        self.engine = engine
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
        self._last_reap = 0.0

    def start(self) -> None:
        if self.consumer.ensure_group():
            _log.info("rules: consumer group created at the end of the mutation log")

    def step(self, block_ms: int | None = None) -> int:
        """One pass: new records (waiting up to ``block_ms`` for one), due timers, and now
        and then abandoned runs. The number of records handled and timers fired."""
        done = 0
        for record in self.consumer.read(block_ms=block_ms):
            self.progress.started += self.engine.handle(record)
            self.consumer.ack(record.log_id)
            done += 1
        self.progress.handled += done
        fired = self.engine.tick(int(time.time() * 1000))
        self.progress.started += fired
        if time.monotonic() - self._last_reap > 1.0:
            self._last_reap = time.monotonic()
            requeue_abandoned(self.queue, self.engine.store.redis, self.engine.keys, self.lease_sec)
        return done + fired

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
