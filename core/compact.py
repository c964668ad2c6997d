"""The one JSON encoding of stored values: compact, UTF-8, no NaN. commit.lua appends to
stored lists as text, so every list it sees must be in this form."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps"]


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
