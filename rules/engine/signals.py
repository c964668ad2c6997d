"""Signal promotion: an ephemeral key observed often enough, with enough confidence, in a
short enough window becomes stable state. Observations live in Redis (a sorted set by
commit time), so promotion counts across restarts and workers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import JsonValue

from core.state.mutation_log import LogRecord
from rules.dsl import Signal
from rules.keys import RuleKeys

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["SignalCounter", "confidence_of"]


def confidence_of(signal: Signal, value: JsonValue, meta: dict[str, JsonValue]) -> float | None:
    """A number is its own confidence; an object carries it in ``confidence_field``; else
    the mutation's meta may carry it. None: the observation states no confidence."""
    candidates = [value, value.get(signal.confidence_field) if isinstance(value, dict) else None]
    candidates.append(meta.get(signal.confidence_field))
    for candidate in candidates:
        if isinstance(candidate, int | float) and not isinstance(candidate, bool):
            return float(candidate)
    return None


class SignalCounter:
    def __init__(self, client: RedisClient, keys: RuleKeys) -> None:
        self.redis = client
        self.keys = keys

    def observe(self, rule_id: str, signal: Signal, record: LogRecord) -> tuple[int, float | None]:
        """Count this observation if it qualifies; answer the qualifying observations in the
        window ending at this one, and this one's confidence. At the threshold the count is
        cleared, so the rule fires once per crossing, not on every observation after it."""
        m = record.mutation
        confidence = confidence_of(signal, m.value, m.meta)
        key = self.keys.signal(rule_id, m.key)
        window_ms = int(signal.within * 1000)
        pipe = self.redis.pipeline(transaction=True)
        if confidence is not None and confidence >= signal.confidence:
            pipe.zadd(key, {m.id: record.ts})
        pipe.zremrangebyscore(key, "-inf", record.ts - window_ms)
        pipe.zcard(key)
        pipe.pexpire(key, window_ms)
        count = int(pipe.execute()[-2])
        if count >= signal.at_least:
            self.redis.delete(key)
        return count, confidence
