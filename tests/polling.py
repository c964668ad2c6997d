"""Waiting for a condition in tests: poll it until a deadline, never sleep for a guess."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["wait_for"]


def wait_for(predicate: Callable[[], Any], what: str = "", timeout: float = 30.0) -> Any:
    """``predicate()``'s first truthy value; AssertionError naming ``what`` at the deadline."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting{' for ' + what if what else ''}")
        time.sleep(0.02)
    return value
