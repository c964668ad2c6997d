"""The one JSON encoding of stored values: compact, UTF-8, no NaN. commit.lua appends to
stored lists as text, so every list it sees must be in this form."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps"]


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def dumps(value: Any) -> str:
    # one encoder for the process: json.dumps with options builds a new one per call
    return _ENCODER.encode(value)
