"""slack_sdk's ``OAuthStateStore`` in Redis: the ``state`` of each install link, good once and
for a while, and only so many outstanding at once.

Anyone may open the install link, and each visit stores a state for ``expiration_seconds``
(Bolt's 10 minutes), so the states outstanding are capped: beside each state's own key (a
string with its expiry) a sorted set indexes them by when they expire. ``issue`` runs one
script that trims what has expired from the index, refuses when ``max_outstanding`` remain
(``TooManyInstallStates``: the install link answers 503 and logs it, see
``bot.slack.serve``), and otherwise stores the state and indexes it; the index expires with
its newest state. ``consume`` takes the state with ``GETDEL`` (and drops it from the index),
so two redirects racing with one state cannot both pass, and an expired one is gone by
itself. What comes back from a browser is checked for shape before it names a key."""

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
    from core.redis.client import RedisClient

__all__ = [
    "DEFAULT_EXPIRATION_SEC",
    "MAX_OUTSTANDING",
    "RedisOAuthStateStore",
    "TooManyInstallStates",
]

DEFAULT_EXPIRATION_SEC = OAuthStateUtils.default_expiration_seconds  # Bolt's: 10 minutes
# install links opened and not yet completed (nor expired), at most: about 1 MB of Redis
MAX_OUTSTANDING = 10_000
_STATE = re.compile(r"[A-Za-z0-9_-]{43}")  # secrets.token_urlsafe(32)

# KEYS[1] the index (sorted set: state -> expiry, server milliseconds), KEYS[2] the state's
# key; ARGV[1] the state, ARGV[2] its expiry in milliseconds, ARGV[3] the most outstanding.
# Returns {1} stored, {0} taken (a collision), {-1, ms} full until the oldest expires in ms.
_ISSUE_LUA = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {-1, math.max(0, tonumber(oldest[2]) - now)}
end
if not redis.call('SET', KEYS[2], '1', 'PX', ttl, 'NX') then
  return {0}
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
return {1}
"""


class TooManyInstallStates(Exception):
    """Too many install links are outstanding to issue another state now."""

    def __init__(self, outstanding: int, retry_after_sec: int) -> None:
        super().__init__(
            f"{outstanding} Slack install links are outstanding, the most allowed; "
            f"the oldest expires in {retry_after_sec}s"
        )
        self.outstanding = outstanding
        self.retry_after_sec = retry_after_sec


class RedisOAuthStateStore(OAuthStateStore):
    def __init__(
        self,
        redis: RedisClient,
        client_id: str,
        *,
        expiration_seconds: int = DEFAULT_EXPIRATION_SEC,
        max_outstanding: int = MAX_OUTSTANDING,
        logger: Logger | None = None,
    ) -> None:
        if expiration_seconds <= 0:
            raise ValueError("the OAuth state's expiration must be a positive number of seconds")
        if max_outstanding <= 0:
            raise ValueError("the most outstanding OAuth states must be a positive number")
        self.redis = redis
        self.keys = OAuthKeys(client_id)
        self.expiration_seconds = expiration_seconds
        self.max_outstanding = max_outstanding
        self._issue = redis.register_script(_ISSUE_LUA)
        self._logger = logger or logging.getLogger("deliberate.slack.oauth")

    @property
    def logger(self) -> Logger:
        return self._logger

    def issue(self, *args: Any, **kwargs: Any) -> str:
        """A new state, stored; ``TooManyInstallStates`` (and a warning logged) when
        ``max_outstanding`` are outstanding already."""
        while True:  # 256 random bits: a second round would take a collision
            state = secrets.token_urlsafe(32)
            reply = self._issue(
                keys=[self.keys.states, self.keys.state(state)],
                args=[state, self.expiration_seconds * 1000, self.max_outstanding],
            )
            if int(reply[0]) == 1:
                return state
            if int(reply[0]) < 0:
                full = TooManyInstallStates(self.max_outstanding, -(-int(reply[1]) // 1000))
                self.logger.warning(
                    "Slack install refused: too many install links outstanding",
                    extra={
                        "fields": {
                            "outstanding": full.outstanding,
                            "retry_after_sec": full.retry_after_sec,
                        }
                    },
                )
                raise full

    def consume(self, state: str) -> bool:
        """True once for a state issued here and not yet expired; False for anything else."""
        if not isinstance(state, str) or not _STATE.fullmatch(state):
            self.logger.info("OAuth state refused: not one this app issues")
            return False
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.getdel(self.keys.state(state))
            pipe.zrem(self.keys.states, state)
            stored, _ = pipe.execute()
        if stored is None:
            self.logger.info("OAuth state refused: unknown, used or expired")
            return False
        return True
