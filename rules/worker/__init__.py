"""The worker's side: the RQ job of a rule's run, its steps done at most once (the step ledger
under a lease), the reaper that puts back runs whose worker died, and the RQ worker whose
scheduler process dies with it."""

from rules.worker.context import RunBusy, WorkerContext, context_for, install
from rules.worker.job import run_rule
from rules.worker.ledger import Claim, Lease, LeaseLost, StepLedger
from rules.worker.reaper import requeue_abandoned
from rules.worker.scheduler import ParentBoundScheduler, RuleWorker
from rules.worker.steps import Run, StepFailed

__all__ = [
    "Claim",
    "Lease",
    "LeaseLost",
    "ParentBoundScheduler",
    "RuleWorker",
    "Run",
    "RunBusy",
    "StepFailed",
    "StepLedger",
    "WorkerContext",
    "context_for",
    "install",
    "requeue_abandoned",
    "run_rule",
]
