"""What a run has done, step by step, so that running its job again never repeats a side
effect: a step is ``started`` before its connector is called and ``done`` (with its result)
after. A run holds a lease while it works; a job whose lease lapsed while a step was
``started`` was abandoned mid-step (its worker died), and that step is not simply run again.

The lease is renewed by a thread, so a long connector call keeps it; a renewal that fails on
a Redis outage is retried until the lease would have lapsed. A worker that lost its lease
starts no further step: claiming a step checks, in Redis and atomically, that the lease still
holds the claimer's token."""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from redis.exceptions import LockNotOwnedError
from redis.lock import Lock

from core.redis.client import INTERRUPTED, disconnect, timed_copy
from core.state.value_json import dumps
from rules.keys import KEEP_SEC, RuleKeys

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["Claim", "Lease", "LeaseLost", "StepLedger"]

_log = logging.getLogger("deliberate.rules")
RETRY_FIRST_SEC = 0.05  # the first wait before a failed renewal is tried again; it doubles
RETRY_MAX_SEC = 1.0
# Redis unreachable for now, or failing over (a cluster's slot without its primary yet)
_OUTAGE = INTERRUPTED

# KEYS[1] = the run's steps hash, KEYS[2] = the run's lease
# ARGV[1] = the step, ARGV[2] = the claimer's lease token, ARGV[3] = the ``started`` record,
# ARGV[4] = seconds the steps hash is kept
# -> {'lost'} when the lease does not hold the claimer's token (nothing written);
#    {'fresh'} when the step is marked started now; {'seen', record} when it was before
CLAIM_SCRIPT = """
if redis.call('GET', KEYS[2]) ~= ARGV[2] then
  return {'lost'}
end
local record = redis.call('HGET', KEYS[1], ARGV[1])
if record then
  return {'seen', record}
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return {'fresh'}
"""


# done, failed, or opened again for a retry: only by the lease's holder, and only while the
# step is still the started one it claimed (a worker whose lease lapsed never overwrites what
# the worker that took the run over wrote)
SETTLE_SCRIPT = """
if redis.call('GET', KEYS[2]) ~= ARGV[2] then
  return 'lost'
end
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[5] then
  return 'settled'
end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 'ok'
"""

# the step is still ours to run: asked just before a connector is called
HOLDS_SCRIPT = """
if redis.call('GET', KEYS[2]) ~= ARGV[2] then
  return 0
end
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[3] then
  return 0
end
return 1
"""

STARTED = dumps({"state": "started"})


class Claim(StrEnum):
    FRESH = "fresh"  # never tried: run it
    DONE = "done"  # done before: skip it
    ABANDONED = "abandoned"  # started by a worker that died: the effect may or may not be there
    FAILED = "failed"  # failed for good before: do not run it
    LOST = "lost"  # the claimer no longer holds the run's lease: it must not start the step


class LeaseLost(RuntimeError):
    """This worker no longer holds the run's lease: it starts no further step."""


class Lease:
    """One worker's hold on one job: redis-py's ``Lock`` (an owner token; renewal and release
    check the token atomically, so a worker never renews or frees a lease another worker took
    after its own lapsed). ``acquire`` fails while another worker holds it; a thread renews
    it every third of its ttl while the run works, so a long connector call keeps it.

    A renewal that fails on a connection error or a timeout is tried again (waits from
    ``RETRY_FIRST_SEC``, doubling to ``RETRY_MAX_SEC``) as long as the lease has not lapsed
    by this worker's clock. The lease is *lost* when it was found taken, or when no renewal
    got through within the ttl; ``held`` is then False for good. The deadline is counted from
    the moment a renewal was *sent*, so this worker gives the lease up no later than Redis
    expires it, even while a renewal hangs. The lock has a client of its own whose socket
    times out in a quarter of the ttl: a network that drops packets silently must not leave
    the renewal (or the release) waiting for ever."""

    def __init__(self, client: RedisClient, key: str, owner: str, ttl_sec: float) -> None:
        self.client = timed_copy(client, max(0.2, ttl_sec / 4))
        # thread_local=False: the renewing thread uses the token the job's thread acquired
        self.lock = Lock(self.client, key, timeout=ttl_sec, blocking=False, thread_local=False)
        self.key = key
        self.owner = owner
        self.ttl_sec = ttl_sec
        self.renewals = 0  # renewals that got through
        self.failures = 0  # renewal attempts that failed on an outage
        self._expires = 0.0  # time.monotonic() by which the lease lapses unless renewed
        self._lost = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def token(self) -> bytes | None:
        token: bytes | None = self.lock.local.token
        return token

    @property
    def held(self) -> bool:
        """Still this worker's, as far as it can tell: acquired, never found taken, and
        renewed within the ttl."""
        return (
            self.token is not None and not self._lost.is_set() and time.monotonic() < self._expires
        )

    @property
    def lost(self) -> bool:
        return self._lost.is_set()

    def acquire(self) -> bool:
        sent = time.monotonic()
        if not self.lock.acquire(token=f"{self.owner}:{uuid.uuid4().hex}"):
            return False
        self._expires = sent + self.ttl_sec
        self._thread = threading.Thread(target=self._renew, name="lease", daemon=True)
        self._thread.start()
        return True

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl_sec / 3):
            if not self._renew_once():
                self._lost.set()
                _log.warning(
                    "lost the lease %s: it was taken, or not renewed within %gs",
                    self.key,
                    self.ttl_sec,
                    extra={"fields": {"lease": self.key}},
                )
                return

    def _renew_once(self) -> bool:
        """True when renewed (or asked to stop meanwhile); False when the lease is lost."""
        wait = RETRY_FIRST_SEC
        while True:
            sent = time.monotonic()
            try:
                self.lock.reacquire()
            except LockNotOwnedError:
                return False  # taken as abandoned meanwhile: nothing of ours left to renew
            except _OUTAGE:
                self.failures += 1
            else:
                self._expires = sent + self.ttl_sec
                self.renewals += 1
                return True
            left = self._expires - time.monotonic()
            if left <= 0:
                return False
            if self._stop.wait(min(wait, left)):
                return True
            wait = min(wait * 2, RETRY_MAX_SEC)

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.ttl_sec)
        try:
            self.lock.release()
        except LockNotOwnedError:
            pass  # lapsed, perhaps taken: not ours to free
        except _OUTAGE:
            pass  # unreachable: it lapses by itself
        finally:
            disconnect(self.client)


class StepLedger:
    def __init__(self, client: RedisClient, keys: RuleKeys, job_id: str, lease: Lease) -> None:
        self.redis = client
        self.key = keys.steps(job_id)
        self.lease = lease
        self._claim = client.register_script(CLAIM_SCRIPT)
        self._settle = client.register_script(SETTLE_SCRIPT)
        self._holds = client.register_script(HOLDS_SCRIPT)

    def claim(self, step: int) -> tuple[Claim, Any]:
        """How step ``step`` stands, and marks it started when it is fresh; ``LOST`` (and
        nothing written) unless the caller's lease still holds its token, checked in the same
        script as the write, so a worker whose lease was taken over never starts a step."""
        token = self.lease.token
        if token is None or not self.lease.held:
            return Claim.LOST, None
        reply: Any = self._claim(
            keys=[self.key, self.lease.key], args=[step, token, STARTED, KEEP_SEC]
        )
        outcome = _text(reply[0])
        if outcome == "lost":
            return Claim.LOST, None
        if outcome == "fresh":
            return Claim.FRESH, None
        record = json.loads(reply[1])
        if record["state"] == "done":
            return Claim.DONE, record.get("result")
        if record["state"] == "failed":
            return Claim.FAILED, record.get("error")
        return Claim.ABANDONED, None

    def holds(self, step: int) -> bool:
        """Whether this worker still holds the run's lease and step ``step`` is still the
        started one it claimed: asked right before a connector is called."""
        token = self.lease.token
        if token is None or not self.lease.held:
            return False
        reply = self._holds(keys=[self.key, self.lease.key], args=[step, token, STARTED])
        return bool(int(reply))

    def done(self, step: int, result: Any) -> None:
        self._put(step, dumps({"state": "done", "result": result}))

    def failed(self, step: int, error: str) -> None:
        self._put(step, dumps({"state": "failed", "error": error}))

    def retry(self, step: int) -> None:
        """The connector said the call failed: the next attempt starts fresh."""
        self._put(step, "")

    def _put(self, step: int, record: str) -> None:
        """Settle the started step (``""``: open it again); ``LeaseLost`` and nothing
        written unless this worker still holds the lease and the step is still started:
        the step then stays started, and whoever runs it next reconciles it."""
        token = self.lease.token or ""
        reply = _text(
            self._settle(
                keys=[self.key, self.lease.key], args=[step, token, record, KEEP_SEC, STARTED]
            )
        )
        if reply != "ok":
            raise LeaseLost(
                f"{self.key} step {step + 1}: this worker lost the run's lease during the "
                "step; its result is left to the worker that took the run over"
            )


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
