"""What a run has done, step by step, so that running its job again never repeats a side
effect: a step is ``started`` before its connector is called and ``done`` (with its result)
after. A run holds a lease while it works; a job whose lease lapsed while a step was
``started`` was abandoned mid-step (its worker died), and that step is not simply run again.

The lease is renewed by a thread, so a long connector call keeps it."""

from __future__ import annotations

import json
import threading
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from core.state.value_json import dumps
from rules.keys import RuleKeys

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["Claim", "Lease", "StepLedger"]

KEEP_SEC = 7 * 86400


class Claim(StrEnum):
    FRESH = "fresh"  # never tried: run it
    DONE = "done"  # done before: skip it
    ABANDONED = "abandoned"  # started by a worker that died: the effect may or may not be there
    FAILED = "failed"  # failed for good before: do not run it


class Lease:
    """One worker's hold on one job; ``acquire`` fails while another worker holds it."""

    def __init__(self, client: Redis, key: str, owner: str, ttl_sec: int) -> None:
        self.redis = client
        self.key = key
        self.owner = owner
        self.ttl_ms = ttl_sec * 1000
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def acquire(self) -> bool:
        if not self.redis.set(self.key, self.owner, nx=True, px=self.ttl_ms):
            return False
        self._thread = threading.Thread(target=self._renew, name="lease", daemon=True)
        self._thread.start()
        return True

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl_ms / 3000):
            if self.redis.get(self.key) != self.owner:
                return  # taken as abandoned meanwhile: nothing of ours left to renew
            self.redis.pexpire(self.key, self.ttl_ms)

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.redis.get(self.key) == self.owner:
            self.redis.delete(self.key)


class StepLedger:
    def __init__(self, client: Redis, keys: RuleKeys, job_id: str) -> None:
        self.redis = client
        self.key = keys.steps(job_id)

    def claim(self, step: int) -> tuple[Claim, Any]:
        """How step ``step`` stands, and marks it started when it is fresh. Only the lease
        holder calls this, so no other worker is between the read and the write."""
        raw = self.redis.hget(self.key, str(step))
        if raw is None:
            self._put(step, {"state": "started"})
            return Claim.FRESH, None
        record = json.loads(raw)
        if record["state"] == "done":
            return Claim.DONE, record.get("result")
        if record["state"] == "failed":
            return Claim.FAILED, record.get("error")
        return Claim.ABANDONED, None

    def done(self, step: int, result: Any) -> None:
        self._put(step, {"state": "done", "result": result})

    def failed(self, step: int, error: str) -> None:
        self._put(step, {"state": "failed", "error": error})

    def retry(self, step: int) -> None:
        """The connector said the call failed: the next attempt starts fresh."""
        self.redis.hdel(self.key, str(step))

    def _put(self, step: int, record: dict[str, Any]) -> None:
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(self.key, str(step), dumps(record))
        pipe.expire(self.key, KEEP_SEC)
        pipe.execute()
