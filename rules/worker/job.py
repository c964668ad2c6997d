"""The RQ job of a rule's run: its steps in order, each at most once.

The worker process installs a ``WorkerContext`` (the composition root builds it: store,
gateway, rules, connector registry) before it starts taking jobs; the job carries only
identification (workspace, rule, the triggering mutation's log id), never rendered
arguments, so that no value from the environment is ever written to the queue.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from rq import get_current_job

from rules.worker.context import RunBusy, context_for
from rules.worker.ledger import Lease
from rules.worker.steps import Run

__all__ = ["run_rule"]


def run_rule(payload: dict[str, Any]) -> dict[str, Any]:
    """Entry point RQ calls (by name: ``rules.keys.JOB_FUNCTION``)."""
    context = context_for(str(payload["workspace"]))
    job = get_current_job()
    job_id = job.id if job is not None else str(payload["jobId"])
    owner = f"{socket.gethostname()}:{os.getpid()}"
    lease_sec = context.book.automation.lease_sec
    lease = Lease(context.redis, context.keys.lease(job_id), owner, lease_sec)
    if not lease.acquire():
        # a duplicate delivery while the job runs elsewhere: not a success (RQ would call
        # the run finished); it fails, and its retry finds the steps done
        raise RunBusy(f"job {job_id} is running on another worker")
    try:
        retries_left = job.retries_left if job is not None else 0
        try:
            run = Run(context, job_id, payload, retries_left or 0, lease)
        except Exception as exc:  # the rule or its mutation is gone: say so where it is seen
            error = context.book.mask(f"{type(exc).__name__}: {exc}")
            context.evaluations.run_failed(payload, job_id, error)
            raise
        result: dict[str, Any] = context.book.mask_json(run.perform())  # RQ keeps it: masked
        return result
    finally:
        lease.release()
