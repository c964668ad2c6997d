"""One audit record per model call: what went in (hashed, with a short preview), what came
out (hashed), the model, tokens, latency and outcome. Logged as a JSON line, and counted
(with a ``meter``: the call by purpose and outcome, and its latency) when it is finished."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from core.metrics import MODEL_CALL_SECONDS, MODEL_CALLS, Meter

__all__ = ["CallAudit", "digest"]

_log = logging.getLogger("deliberate.llm")
PREVIEW_CHARS = 120
_NOT_KEPT = ("sink", "meter")  # where it goes, not what it says


def digest(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class CallAudit:
    purpose: str
    model: str
    input_hash: str
    input_preview: str
    correlation_id: str | None = None
    output_hash: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    outcome: str = "pending"  # ok | error | invalid | fallback
    error: str | None = None
    sink: Callable[[CallAudit], None] | None = field(default=None, repr=False, compare=False)
    meter: Meter | None = field(default=None, repr=False, compare=False)

    def record(self) -> dict[str, Any]:
        # not asdict: it would deep-copy the sink (and whatever the sink is bound to)
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _NOT_KEPT}

    def finish(self, outcome: str, error: str | None = None) -> CallAudit:
        self.outcome, self.error = outcome, error
        level = logging.INFO if outcome == "ok" else logging.WARNING
        fields = {"event": "llm.call"} | self.record()
        said = f"{outcome}: {error}" if error else outcome  # why, in the line itself
        _log.log(
            level, "%s call to %s: %s", self.purpose, self.model, said, extra={"fields": fields}
        )
        if self.meter is not None:
            self.meter.count(MODEL_CALLS, self.purpose, outcome)
            if self.latency_ms is not None:
                self.meter.observe(MODEL_CALL_SECONDS, self.latency_ms / 1000, self.purpose)
        if self.sink is not None:
            self.sink(self)
        return self
