"""``for`` timers: a rule whose condition must hold for a while waits here, in Redis, so a
restart loses nothing. A timer is keyed by rule and state key: while one is pending, the
condition holding again does not restart it; the condition failing cancels it.

Both keys hold pending timers only: a timer leaves them when it fires (due, even if its rule
left the config) or is cancelled; ``sweep`` drops a cause whose timer is gone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rules.keys import RuleKeys

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["DueTimer", "Timers"]

# KEYS[1] = the timers sorted set, KEYS[2] = the timer causes hash
# -> how many causes were dropped: those whose timer is no longer pending
SWEEP_SCRIPT = """
local dropped = 0
for _, member in ipairs(redis.call('HKEYS', KEYS[2])) do
  if not redis.call('ZSCORE', KEYS[1], member) then
    redis.call('HDEL', KEYS[2], member)
    dropped = dropped + 1
  end
end
return dropped
"""


@dataclass(frozen=True)
class DueTimer:
    rule_id: str
    key: str
    log_id: str  # the mutation that started it
    due_ms: int


def _member(rule_id: str, key: str) -> str:
    return f"{rule_id}|{key}"


class Timers:
    def __init__(self, client: RedisClient, keys: RuleKeys) -> None:
        self.redis = client
        self.keys = keys
        self._sweep = client.register_script(SWEEP_SCRIPT)

    def start(
        self, rule_id: str, key: str, log_id: str, due_ms: int, *, replace: bool = False
    ) -> bool:
        """Start the timer unless one is pending (``replace``: start it over from this
        mutation); True when this call started it."""
        member = _member(rule_id, key)
        pipe = self.redis.pipeline(transaction=True)
        pipe.zadd(self.keys.timers, {member: due_ms}, nx=not replace)
        if replace:
            pipe.hset(self.keys.timer_causes, member, log_id)
        else:
            pipe.hsetnx(self.keys.timer_causes, member, log_id)
        added, _ = pipe.execute()
        return bool(added) or replace

    def cancel(self, rule_id: str, key: str) -> bool:
        member = _member(rule_id, key)
        pipe = self.redis.pipeline(transaction=True)
        pipe.zrem(self.keys.timers, member)
        pipe.hdel(self.keys.timer_causes, member)
        removed, _ = pipe.execute()
        return bool(removed)

    def pending(self, rule_id: str, key: str) -> int | None:
        score = self.redis.zscore(self.keys.timers, _member(rule_id, key))
        return None if score is None else int(score)

    def take_due(self, now_ms: int, limit: int = 100) -> list[DueTimer]:
        """Timers due by ``now_ms``, each handed to exactly one caller (removed as taken)."""
        due = []
        found: Any = self.redis.zrangebyscore(
            self.keys.timers, "-inf", now_ms, start=0, num=limit, withscores=True
        )
        for raw, score in found:
            member = str(raw)
            pipe = self.redis.pipeline(transaction=True)
            pipe.zrem(self.keys.timers, member)
            pipe.hget(self.keys.timer_causes, member)
            pipe.hdel(self.keys.timer_causes, member)
            removed, log_id, _ = pipe.execute()
            if removed and log_id:
                rule_id, _, key = member.partition("|")
                due.append(DueTimer(rule_id, key, str(log_id), int(score)))
        return due

    def sweep(self) -> int:
        """Drop the causes of timers no longer pending; how many."""
        return int(self._sweep(keys=[self.keys.timers, self.keys.timer_causes]))
