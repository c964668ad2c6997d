"""Durations as people write them (``30m``, ``1h30m``): for ``--for`` on the command line and
``for`` in the model's proposals (``core.time_phrases`` says them, and the deadlines)."""

from __future__ import annotations

import re

from core.state.mutation import MAX_TTL_SEC
from core.time_phrases import duration_text

__all__ = ["duration_sec", "duration_text"]

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
