"""What a run has done, step by step, so that running its job again never repeats a side
effect: a step is ``started`` before its connector is called and ``done`` (with its result)
after. A run holds a lease while it works; a job whose lease lapsed while a step was
``started`` was abandoned mid-step (its worker died), and that step is not simply run again.

The lease is renewed by a thread, so a long connector call keeps it."""

from __future__ import annotations

import contextlib
import json
import threading
import uuid
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from redis.exceptions import LockNotOwnedError
from redis.lock import Lock

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
    """One worker's hold on one job: redis-py's ``Lock`` (an owner token; renewal and release
    check the token atomically, so a worker never renews or frees a lease another worker took
    after its own lapsed). ``acquire`` fails while another worker holds it; a thread renews
    it while the run works, so a long connector call keeps it."""

    def __init__(self, client: Redis, key: str, owner: str, ttl_sec: int) -> None:
        # thread_local=False: the renewing thread uses the token the job's thread acquired
        self.lock = Lock(client, key, timeout=ttl_sec, blocking=False, thread_local=False)
        self.owner = owner
        self.ttl_sec = ttl_sec
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def acquire(self) -> bool:
        if not self.lock.acquire(token=f"{self.owner}:{uuid.uuid4().hex}"):
            return False
        self._thread = threading.Thread(target=self._renew, name="lease", daemon=True)
        self._thread.start()
        return True

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl_sec / 3):
            try:
                self.lock.reacquire()
            except LockNotOwnedError:
                return  # taken as abandoned meanwhile: nothing of ours left to renew

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with contextlib.suppress(LockNotOwnedError):  # lapsed, perhaps taken: not ours to free
            self.lock.release()


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
