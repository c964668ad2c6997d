"""One audit record per model call: what went in (hashed, with a short preview), what came
out (hashed), the model, tokens, latency and outcome. Logged as a JSON line."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["CallAudit", "digest"]

_log = logging.getLogger("deliberate.llm")
PREVIEW_CHARS = 120


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

    def record(self) -> dict[str, Any]:
        # not asdict: it would deep-copy the sink (and whatever the sink is bound to)
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "sink"}

    def finish(self, outcome: str, error: str | None = None) -> CallAudit:
        self.outcome, self.error = outcome, error
        level = logging.INFO if outcome == "ok" else logging.WARNING
        fields = {"event": "llm.call"} | self.record()
        _log.log(
            level, "%s call to %s: %s", self.purpose, self.model, outcome, extra={"fields": fields}
        )
        if self.sink is not None:
            self.sink(self)
        return self
