"""Runs whose worker died: RQ notices an abandoned job only a minute or more after its last
heartbeat; the run's own lease lapses in ``lease_sec``. A started job with no lease is put
back on its queue (one retry spent), and its step ledger decides what is safe to redo."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from rq import Queue
from rq.job import Job, JobStatus
from rq.registry import FailedJobRegistry, StartedJobRegistry

from rules.history import RuleHistory
from rules.keys import JOB_FUNCTION, RuleKeys

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["requeue_abandoned"]

_log = logging.getLogger("deliberate.rules")


def requeue_abandoned(
    queue: Queue, state: RedisClient, keys: RuleKeys, lease_sec: int, evaluations: RuleHistory
) -> list[str]:
    """Job ids put back on the queue. ``state``: the Redis holding the leases (the state's,
    which may differ from the queue's). A job with no retries left fails, and says so."""
    registry = StartedJobRegistry(queue=queue)
    requeued = []
    for job_id in registry.get_job_ids(cleanup=False):
        job = Job.fetch_many([job_id], connection=queue.connection)[0]
        if job is None or job.func_name != JOB_FUNCTION:
            continue
        if job.get_status(refresh=False) is not JobStatus.STARTED or not _stale(job, lease_sec):
            continue
        if state.exists(keys.lease(job_id)):
            continue  # its worker is alive and renewing
        registry.remove_executions(job)
        if not job.retries_left:
            _give_up(queue, job, evaluations)
            continue
        job.retries_left -= 1
        queue.enqueue_job(job)
        requeued.append(job_id)
        _log.warning(
            "requeued job %s: its worker stopped renewing its lease",
            job_id,
            extra={"fields": {"job": job_id}},
        )
    return requeued


def _stale(job: Job, lease_sec: int) -> bool:
    started = job.started_at.timestamp() if job.started_at else 0.0
    return time.time() - started > lease_sec


def _give_up(queue: Queue, job: Job, evaluations: RuleHistory) -> None:
    why = "its worker died and no retries are left"
    with queue.connection.pipeline() as pipe:
        job.set_status(JobStatus.FAILED, pipeline=pipe)
        FailedJobRegistry(queue=queue).add(job, exc_string=f"abandoned: {why}", pipeline=pipe)
        pipe.execute()
    queue.enqueue_dependents(job)  # a queued run waiting on this one may go now
    evaluations.run_failed(job.args[0] if job.args else {}, job.id, why)
