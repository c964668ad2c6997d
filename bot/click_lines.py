"""The lines a clicked message shows in place of its buttons, one per click, kept in Redis so
that every update of the message shows all of them: two people may click two buttons of one
message at once, and the last update to land must not hide the other click. The adapter
serialises the updates of one message; this only keeps the lines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.state.keys import WorkspaceKeys

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["ClickLines"]


class ClickLines:
    def __init__(self, client: Redis, workspace: str, ttl_sec: int) -> None:
        self.redis = client
        self.keys = WorkspaceKeys(workspace)
        self.ttl_sec = ttl_sec

    def key(self, platform: str, message: str) -> str:
        return self.keys.adapter(platform, f"closed:{message}")

    def add(self, platform: str, message: str, line: str) -> list[str]:
        """Every line of ``message`` so far, ``line`` last."""
        key = self.key(platform, message)
        pipe = self.redis.pipeline(transaction=True)  # (a cluster client defaults to False)
        pipe.rpush(key, line)
        pipe.expire(key, self.ttl_sec)
        pipe.lrange(key, 0, -1)
        return [str(x) for x in pipe.execute()[-1]]  # a decoding client
