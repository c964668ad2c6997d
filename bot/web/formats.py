"""How the pages write times, values and actors: in UTC, to the second; a value as JSON
shortened to what fits a table cell (the full text in its title); a secret never."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from flask import Flask

__all__ = ["MASK", "install", "shown_value", "when"]

MASK = "•••••• (secret)"
CELL_CHARS = 240


def when(ms: int | None) -> str:
    if not ms:
        return ""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def shown_value(value: Any, secret: bool = False, limit: int = CELL_CHARS) -> str:
    if secret:
        return MASK
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def install(app: Flask) -> None:
    app.add_template_filter(when, "when")
    app.add_template_filter(shown_value, "shown")
