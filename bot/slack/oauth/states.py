"""slack_sdk's ``OAuthStateStore`` in Redis: the ``state`` of each install link, good once and
for a while. ``issue`` stores a random value with ``SET … EX``; ``consume`` takes it with
``GETDEL``, so two redirects racing with one state cannot both pass, and an expired one is
gone by itself. What comes back from a browser is checked for shape before it names a key."""

from __future__ import annotations

import logging
import re
import secrets
from logging import Logger
from typing import TYPE_CHECKING, Any

from slack_sdk.oauth.state_store.state_store import OAuthStateStore
from slack_sdk.oauth.state_utils import OAuthStateUtils

from .keys import OAuthKeys

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["DEFAULT_EXPIRATION_SEC", "RedisOAuthStateStore"]

DEFAULT_EXPIRATION_SEC = OAuthStateUtils.default_expiration_seconds  # Bolt's: 10 minutes
_STATE = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32)


class RedisOAuthStateStore(OAuthStateStore):
    def __init__(
        self,
        redis: Redis,
        client_id: str,
        *,
        expiration_seconds: int = DEFAULT_EXPIRATION_SEC,
        logger: Logger | None = None,
    ) -> None:
        if expiration_seconds <= 0:
            raise ValueError("the OAuth state's expiration must be a positive number of seconds")
        self.redis = redis
        self.keys = OAuthKeys(client_id)
        self.expiration_seconds = expiration_seconds
        self._logger = logger or logging.getLogger("deliberate.slack.oauth")

    @property
    def logger(self) -> Logger:
        return self._logger

    def issue(self, *args: Any, **kwargs: Any) -> str:
        while True:  # 256 random bits: a second round would take a collision
            state = secrets.token_urlsafe(32)
            if self.redis.set(self.keys.state(state), "1", ex=self.expiration_seconds, nx=True):
                return state

    def consume(self, state: str) -> bool:
        """True once for a state issued here and not yet expired; False for anything else."""
        if not isinstance(state, str) or not _STATE.fullmatch(state):
            self.logger.info("OAuth state refused: not one this app issues")
            return False
        if self.redis.getdel(self.keys.state(state)) is None:
            self.logger.info("OAuth state refused: unknown, used or expired")
            return False
        return True
