"""Durations as people write them (``30m``, ``1h30m``) and a change's revert deadline as
they read it: for ``--for`` on the command line, ``for`` in the model's proposals, and
every place that shows how long a change lasts."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from core.state.mutation import MAX_TTL_SEC

__all__ = ["duration_sec", "duration_text", "until_text"]

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
_DURATION = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def duration_sec(text: str) -> int:
    """``30m``, ``90s``, ``2h``, ``1d``, ``1h30m``: seconds. ``ValueError`` says what a
    duration looks like."""
    found = _DURATION.match(text.strip())
    if not text.strip() or found is None or not any(found.groups()):
        raise ValueError(
            f"{text!r} is not a duration: write a number and a unit (s, m, h, d), "
            "e.g. 90s, 30m, 2h, 1d or 1h30m"
        )
    days, hours, minutes, seconds = (int(g or 0) for g in found.groups())
    total = days * 86_400 + hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise ValueError(f"{text!r} is no time at all: a change for a while lasts at least 1s")
    if total > MAX_TTL_SEC:
        raise ValueError(f"{text!r} is longer than {MAX_TTL_SEC // 86_400} days")
    return total


def duration_text(sec: float) -> str:
    """Seconds as ``duration_sec`` reads them (``1h30m``)."""
    left, parts = round(sec), list[str]()
    for unit in ("d", "h", "m", "s"):
        size = _UNITS[unit]
        if left >= size or (unit == "s" and not parts):
            parts.append(f"{left // size}{unit}")
            left %= size
    return "".join(parts)


def until_text(ms: int) -> str:
    """A revert's deadline as people read it (to the second: a change may last 90s)."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
