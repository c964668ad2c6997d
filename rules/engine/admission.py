"""Starting a rule's run on the RQ queue, as its mode and cooldown allow.

A run is one RQ job that performs the rule's steps in order. Its job id is derived from the
triggering mutation and the rule, so enqueuing the same firing twice finds the first job.
Modes count the runs of one rule for one key that have not finished: ``single`` skips while
one is going, ``parallel`` allows ``max`` at once, ``queued`` lets up to ``max`` wait for
the one before them, ``restart`` cancels the waiting ones, asks the running one to stop
before its next step, and starts afresh."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rq import Queue, Retry
from rq.exceptions import InvalidJobOperation, NoSuchJobError
from rq.job import Dependency, Job, JobStatus

from rules.config import AutomationConfig
from rules.dsl import Mode, Rule
from rules.keys import JOB_FUNCTION, KEEP_SEC, RuleKeys

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["Admission", "RunStarter", "job_id_for"]

_DONE = {JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED}


def job_id_for(workspace: str, mutation_id: str, rule_id: str) -> str:
    """One run per mutation and rule; its steps' idempotency keys extend it with the step."""
    digest = hashlib.blake2s(f"{workspace}|{mutation_id}|{rule_id}".encode(), digest_size=12)
    return f"rule-{digest.hexdigest()}"


@dataclass(frozen=True)
class Admission:
    """``job_id`` when a run was enqueued (or had been before); else ``why`` not."""

    job_id: str | None
    why: str


class RunStarter:
    def __init__(
        self,
        state: RedisClient,
        queue: Queue,
        keys: RuleKeys,
        settings: AutomationConfig,
    ) -> None:
        self.redis = state
        self.queue = queue
        self.keys = keys
        self.settings = settings

    def start(
        self, rule: Rule, key: str, mutation_id: str, payload: dict[str, object]
    ) -> Admission:
        job_id = job_id_for(self.keys.workspace.workspace, mutation_id, rule.id)
        if Job.exists(job_id, connection=self.queue.connection):
            return Admission(job_id, "already enqueued for this mutation (nothing added)")
        if rule.cooldown and self.redis.exists(self.keys.cooldown(rule.id, key)):
            return Admission(None, f"cooling down ({rule.cooldown:g}s after the last run)")
        going = self._going(rule.id, key)
        depends: str | None = None
        if rule.mode is Mode.SINGLE and going:
            return Admission(None, f"mode single: a run is going ({going[-1]})")
        if rule.mode in (Mode.PARALLEL, Mode.QUEUED) and len(going) >= rule.max:
            return Admission(None, f"mode {rule.mode.value}: {len(going)} runs already (max)")
        if rule.mode is Mode.QUEUED and going:
            depends = going[-1]
        stopped = self._stop(going) if rule.mode is Mode.RESTART else []
        self._enqueue(job_id, payload, depends)
        self._remember(rule.id, key, job_id)
        if rule.cooldown:
            self.redis.set(self.keys.cooldown(rule.id, key), job_id, px=int(rule.cooldown * 1000))
        why = f"enqueued {job_id}"
        if depends:
            why += f" after {depends}"
        if stopped:
            why += f"; stopped {', '.join(stopped)} (mode restart)"
        return Admission(job_id, why)

    def _enqueue(self, job_id: str, payload: dict[str, object], depends: str | None) -> None:
        s = self.settings
        retry = Retry(max=s.retries, interval=s.backoff_sec or 0) if s.retries else None
        self.queue.enqueue(
            JOB_FUNCTION,
            payload,
            job_id=job_id,
            retry=retry,
            job_timeout=s.timeout_sec,
            result_ttl=KEEP_SEC,
            failure_ttl=KEEP_SEC,
            depends_on=Dependency(jobs=[depends], allow_failure=True) if depends else None,
        )

    def _remember(self, rule_id: str, key: str, job_id: str) -> None:
        """Add the run to the rule's runs for the key; ids older than ``KEEP_SEC`` (their
        RQ jobs are gone by then) are trimmed, and the set lapses ``KEEP_SEC`` after its last
        run, so a key that stops changing leaves nothing behind."""
        runs_key = self.keys.runs(rule_id, key)
        now_ms = time.time() * 1000
        pipe = self.redis.pipeline(transaction=True)
        pipe.zadd(runs_key, {job_id: now_ms})
        pipe.zremrangebyscore(runs_key, "-inf", now_ms - KEEP_SEC * 1000)
        pipe.expire(runs_key, KEEP_SEC)
        pipe.execute()

    def sweep(self) -> int:
        """Runs sets written before they carried a TTL: trimmed and given one; how many."""
        swept = 0
        oldest = time.time() * 1000 - KEEP_SEC * 1000
        for runs_key in self.redis.scan_iter(match=self.keys.every_runs_key, count=1000):
            if self.redis.ttl(runs_key) != -1:
                continue
            pipe = self.redis.pipeline(transaction=True)
            pipe.zremrangebyscore(runs_key, "-inf", oldest)
            pipe.expire(runs_key, KEEP_SEC)
            pipe.execute()
            swept += 1
        return swept

    def _going(self, rule_id: str, key: str) -> list[str]:
        """Job ids of runs not yet finished, oldest first; finished ones are forgotten."""
        runs_key = self.keys.runs(rule_id, key)
        ids = [str(i) for i in self.redis.zrange(runs_key, 0, -1)]
        if not ids:
            return []
        jobs = Job.fetch_many(ids, connection=self.queue.connection)
        going: list[str] = []
        done: list[str] = []
        for job_id, job in zip(ids, jobs, strict=True):
            status = job.get_status(refresh=False) if job is not None else None
            (done if status is None or status in _DONE else going).append(job_id)
        if done:
            self.redis.zrem(runs_key, *done)
        return going

    def request_stop(self, job_id: str) -> None:
        """Ask a running run to stop before its next step (a step under way finishes: a
        side effect is never cut in half)."""
        self.redis.set(self.keys.stop(job_id), "1", ex=self.settings.timeout_sec * 10)

    def _stop(self, going: list[str]) -> list[str]:
        stopped = []
        for job_id in going:
            try:
                job = Job.fetch(job_id, connection=self.queue.connection)
                if job.get_status() is JobStatus.STARTED:
                    self.request_stop(job_id)
                else:
                    job.cancel()
                stopped.append(job_id)
            except (NoSuchJobError, InvalidJobOperation):
                continue
        return stopped
