"""Reading a connector's settings from ``ActionContext.env``, the only place credentials come
from. Error messages name the variable, never its value."""

from __future__ import annotations

from collections.abc import Mapping

from rules.connector_api import ConnectorError

__all__ = ["optional", "required"]


def required(env: Mapping[str, str], name: str, service: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise ConnectorError(f"{service}: {name} is not set", retryable=False)
    return value


def optional(env: Mapping[str, str], name: str, default: str) -> str:
    return env.get(name, "").strip() or default
