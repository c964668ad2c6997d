"""Deliveries already handled. Platforms deliver some things more than once (Slack retries an
event it thinks was missed, and sends one message both as ``message`` and as
``app_mention``); the first delivery claims it, the others find it claimed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.state.keys import WorkspaceKeys

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["DEFAULT_DELIVERY_TTL_SEC", "Deliveries"]

DEFAULT_DELIVERY_TTL_SEC = 86400  # Slack retries for minutes; a day is well past that


class Deliveries:
    def __init__(
        self, client: RedisClient, workspace: str, ttl_sec: int = DEFAULT_DELIVERY_TTL_SEC
    ):
        self.redis = client
        self.keys = WorkspaceKeys(workspace)
        self.ttl_sec = ttl_sec

    def claim(self, platform: str, delivery_id: str) -> bool:
        """True for the first claim of this delivery, False for every later one."""
        return bool(
            self.redis.set(self.keys.delivery(platform, delivery_id), 1, nx=True, ex=self.ttl_sec)
        )

    def release(self, platform: str, delivery_id: str) -> None:
        """Forget a claim whose handling failed, so that a redelivery is handled."""
        self.redis.delete(self.keys.delivery(platform, delivery_id))
