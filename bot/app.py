"""The composition root: config, Redis, store, policy and gateway wired together once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from redis import Redis

from core.config import CoreConfig, load_config
from core.connection import connect
from core.gateway import MutationGateway
from core.log import MutationLog
from core.policy import Policy
from core.store import StateStore

__all__ = ["App", "build_app"]


@dataclass
class App:
    config: CoreConfig
    redis: Redis
    store: StateStore
    policy: Policy
    gateway: MutationGateway

    @property
    def log(self) -> MutationLog:
        return MutationLog(self.redis, self.store.keys)


def build_app(
    workspace: str = "local",
    config_path: Path | None = None,
    redis_url: str | None = None,
    client: Redis | None = None,
) -> App:
    """Load the config first (a bad file should fail before any server starts)."""
    config = load_config(config_path)
    redis = client if client is not None else connect(redis_url)
    store = StateStore(redis, workspace, idempotency_ttl_sec=config.store.idempotency_ttl_sec)
    policy = Policy(config.policy)
    return App(config, redis, store, policy, MutationGateway(store, policy))
