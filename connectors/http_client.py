"""One HTTP client per process for the connectors that speak HTTP. Building an ``httpx``
client costs tens of milliseconds (its TLS context), more than a local request itself, so
actions share this one; a forked child builds its own (connections don't cross a fork)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

__all__ = ["shared"]

_client: httpx.Client | None = None


def shared() -> httpx.Client:
    global _client
    if _client is None:
        import httpx  # with an action's first request: a command that only reads the config
        # (names the actions) does not pay for httpx's import, its CLI's rich and click included

        _client = httpx.Client()
    return _client


def _forget() -> None:
    global _client
    _client = None


os.register_at_fork(after_in_child=_forget)
