"""How the pages write times, values and actors: in UTC, to the second, and how far off where
the page read the server's clock (as ``core.time_phrases`` says every deadline); a value as
JSON shortened to what fits a table cell (the full text in its title); a secret never."""

from __future__ import annotations

import json
from typing import Any

from flask import Flask

from core.time_phrases import moment_text

__all__ = ["MASK", "install", "sentence", "shown_value", "when"]

MASK = "•••••• (secret)"
CELL_CHARS = 240


def when(ms: int | None, now_ms: int | None = None) -> str:
    """``{{ at|when }}``: the moment in UTC; ``{{ at|when(now) }}``: and how far off."""
    return moment_text(ms, now_ms) if ms else ""


def sentence(text: str) -> str:
    """``text`` as a sentence starts (its first letter upper case, the rest as it is)."""
    return text[:1].upper() + text[1:]


def shown_value(value: Any, secret: bool = False, limit: int = CELL_CHARS) -> str:
    if secret:
        return MASK
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def install(app: Flask) -> None:
    app.add_template_filter(when, "when")
    app.add_template_filter(shown_value, "shown")
    app.add_template_filter(sentence, "sentence")
