"""The RQ job of a rule's run: its steps in order, each at most once.

The worker process installs a ``WorkerContext`` (the composition root builds it: store,
gateway, rules, connector registry) before it starts taking jobs; the job carries only
identification (workspace, rule, the triggering mutation's log id), never rendered
arguments, so that no value from the environment is ever written to the queue.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rq import get_current_job

from core.gateway import MutationGateway
from core.log import MutationLog
from rules.book import RuleBook
from rules.connector_api import ActionRegistry
from rules.eval_log import EvaluationLog
from rules.keys import RuleKeys
from rules.ledger import Lease

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["RunBusy", "WorkerContext", "install", "run_rule"]


@dataclass
class WorkerContext:
    redis: Redis
    gateway: MutationGateway
    book: RuleBook
    registry: ActionRegistry
    env: Mapping[str, str] = field(default_factory=lambda: os.environ)

    @property
    def workspace(self) -> str:
        return self.gateway.store.workspace

    @property
    def keys(self) -> RuleKeys:
        return RuleKeys(self.workspace)

    @property
    def log(self) -> MutationLog:
        return MutationLog(self.redis, self.gateway.store.keys)

    @property
    def evaluations(self) -> EvaluationLog:
        return EvaluationLog(self.redis, self.keys, self.book.automation.evaluations_kept)


_contexts: dict[str, WorkerContext] = {}


def install(context: WorkerContext) -> None:
    """Make this process able to run the workspace's rule jobs."""
    _contexts[context.workspace] = context


def run_rule(payload: dict[str, Any]) -> dict[str, Any]:
    """Entry point RQ calls (by name: ``rules.jobs.run_rule``)."""
    from rules.run import Run  # the run's steps; imported here to keep this module small

    workspace = str(payload["workspace"])
    context = _contexts.get(workspace)
    if context is None:
        raise RuntimeError(
            f"this worker serves no rules for workspace {workspace!r}: run `deliberate "
            f"--workspace {workspace} worker`"
        )
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
            run = Run(context, job_id, payload, retries_left or 0)
        except Exception as exc:  # the rule or its mutation is gone: say so where it is seen
            error = context.book.mask(f"{type(exc).__name__}: {exc}")
            context.evaluations.run_failed(payload, job_id, error)
            raise
        result: dict[str, Any] = context.book.mask_json(run.perform())  # RQ keeps it: masked
        return result
    finally:
        lease.release()


class RunBusy(RuntimeError):
    """Another worker holds this job's lease."""
