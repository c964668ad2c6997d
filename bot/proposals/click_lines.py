"""The lines a clicked message shows in place of its buttons, one per click, kept in Redis so
that every update of the message shows all of them: two people may click two buttons of one
message at once, and the last update to land must not hide the other click. The adapters
serialise the updates of one message under ``lock``, a Redis lock, so that the bot's
replicas (several processes, a deploy's overlap) take turns too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from redis.lock import Lock

from core.state.keys import WorkspaceKeys

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["LOCK_SEC", "ClickLines"]

LOCK_SEC = 30  # longer than one message update with its rate-limit retries


class ClickLines:
    def __init__(self, client: RedisClient, workspace: str, ttl_sec: int) -> None:
        self.redis = client
        self.keys = WorkspaceKeys(workspace)
        self.ttl_sec = ttl_sec

    def key(self, platform: str, message: str) -> str:
        return self.keys.adapter(platform, f"closed:{message}")

    def lock(self, platform: str, message: str) -> Lock:
        """The lock one message's updates are made under, waited for up to ``LOCK_SEC``
        (``LockError`` then). Not thread-local: an adapter may take it in one worker thread
        and free it in another."""
        return Lock(
            self.redis,
            f"{self.key(platform, message)}:lock",
            timeout=LOCK_SEC,
            blocking_timeout=LOCK_SEC,
            thread_local=False,
        )

    def add(self, platform: str, message: str, line: str) -> list[str]:
        """Every line of ``message`` so far, ``line`` last."""
        key = self.key(platform, message)
        pipe = self.redis.pipeline(transaction=True)  # (a cluster client defaults to False)
        pipe.rpush(key, line)
        pipe.expire(key, self.ttl_sec)
        pipe.lrange(key, 0, -1)
        return [str(x) for x in pipe.execute()[-1]]  # a decoding client
