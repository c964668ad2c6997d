"""``/metrics`` (Prometheus) and ``/health``."""

from __future__ import annotations

from flask import Blueprint

from bot.web.context import web

__all__ = ["blueprint", "health"]

blueprint = Blueprint("metrics", __name__)


def health() -> tuple[str, int]:
    """200 while Redis answers, 503 when it does not (the platform's router asks)."""
    try:
        web().base.redis.ping()
    except Exception as exc:  # any failure to answer is "not healthy"
        return f"redis does not answer: {exc}\n", 503
    return "ok\n", 200
