"""What a worker process needs to run a workspace's rule jobs: its ``WorkerContext`` (store,
gateway, rules, connector registry), installed once per workspace before it takes jobs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.gateway.mutation_gateway import MutationGateway
from core.state.mutation_log import MutationLog
from rules.book import RuleBook
from rules.connector_api import ActionRegistry
from rules.history import RuleHistory
from rules.keys import RuleKeys

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["RunBusy", "WorkerContext", "context_for", "install"]

_contexts: dict[str, WorkerContext] = {}


@dataclass
class WorkerContext:
    redis: RedisClient
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
    def evaluations(self) -> RuleHistory:
        return RuleHistory(self.redis, self.keys, self.book.automation.evaluations_kept)


def install(context: WorkerContext) -> None:
    """Make this process able to run the workspace's rule jobs."""
    _contexts[context.workspace] = context


def context_for(workspace: str) -> WorkerContext:
    context = _contexts.get(workspace)
    if context is None:
        raise RuntimeError(
            f"this worker serves no rules for workspace {workspace!r}: run `deliberate "
            f"--workspace {workspace} worker`"
        )
    return context


class RunBusy(RuntimeError):
    """Another worker holds this job's lease."""
