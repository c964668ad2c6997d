"""Deadlines as people read them (``core.time_phrases``): in UTC to the second, and how far off
against the server's now, "in 25 min" ahead and "3 min ago" once past, never negative;
each phrase names its deadline for what it is (expires, escalates, reverts) and says it
past as past."""

from __future__ import annotations

import pytest

from core.time_phrases import (
    TimedChange,
    escalation_phrase,
    expiry_phrase,
    lasting_phrase,
    moment_text,
    relative_text,
    revert_phrase,
    utc_text,
    view_deadlines,
)

NOW = 1_777_636_800_000  # 2026-05-01 12:00:00 UTC
SEC, MIN, HOUR, DAY = 1000, 60_000, 3_600_000, 86_400_000


def test_a_moment_is_said_in_utc_to_the_second() -> None:
    assert utc_text(NOW + 5 * SEC) == "2026-05-01 12:00:05 UTC"
    assert moment_text(NOW + 25 * MIN) == "2026-05-01 12:25:00 UTC"
    assert moment_text(NOW + 25 * MIN, NOW) == "2026-05-01 12:25:00 UTC (in 25 min)"


@pytest.mark.parametrize(
    ("offset", "said"),
    [
        (0, "now"),
        (400, "now"),
        (40 * SEC, "in 40 s"),
        (-40 * SEC, "40 s ago"),
        (25 * MIN, "in 25 min"),
        (-3 * MIN, "3 min ago"),
        (90 * MIN, "in 1 h 30 min"),
        (DAY - 5, "in 24 h"),  # a day's deadline, read a moment after it was set
        (3 * DAY + 5 * HOUR, "in 3 d 5 h"),
        (-2 * DAY, "2 d ago"),
    ],
)
def test_how_far_off_is_rounded_to_the_unit_it_shows_and_never_negative(
    offset: int, said: str
) -> None:
    assert relative_text(NOW + offset, NOW) == said
    assert "-" not in said


def test_each_deadline_is_named_for_what_it_is_ahead_and_past() -> None:
    assert expiry_phrase(NOW + 25 * MIN, NOW) == "expires at 2026-05-01 12:25:00 UTC (in 25 min)"
    assert expiry_phrase(NOW - 3 * MIN, NOW) == "expired at 2026-05-01 11:57:00 UTC (3 min ago)"
    assert expiry_phrase(NOW, NOW).startswith("expired at ")  # the deadline itself is past
    assert escalation_phrase(NOW + HOUR, None, NOW).startswith("escalates at 2026-05-01 13:00")
    assert escalation_phrase(NOW - MIN, None, NOW) == (
        "escalation due since 2026-05-01 11:59:00 UTC (1 min ago)"
    )
    assert escalation_phrase(NOW - HOUR, NOW - 5 * MIN, NOW) == (
        "escalated at 2026-05-01 11:55:00 UTC (5 min ago)"
    )


def test_a_revert_says_when_and_by_which_mutation_waiting_due_done_or_refused() -> None:
    by = "revert-m1"
    assert revert_phrase(NOW + 30 * MIN, NOW, by=by) == (
        "reverts at 2026-05-01 12:30:00 UTC (in 30 min) by revert-m1"
    )
    assert revert_phrase(NOW - 5 * SEC, NOW, by=by).startswith("revert due since ")
    done = TimedChange("m1", NOW - 2 * MIN, by, "reverted")
    assert done.phrase(NOW) == "reverted at 2026-05-01 11:58:00 UTC (2 min ago) by revert-m1"
    refused = TimedChange("m1", NOW - 2 * MIN, by, "refused").phrase(NOW)
    assert refused.startswith("not reverted at ") and "refused" in refused
    assert lasting_phrase(1800) == "reverts by itself 30m after it is applied"


def test_a_view_says_its_deadlines_with_the_moments_they_name() -> None:
    assert view_deadlines(None, None, None) == []
    said = view_deadlines(NOW + HOUR, 1800, None, NOW)
    assert said == [
        ("expires at 2026-05-01 13:00:00 UTC (in 1 h)", NOW + HOUR),
        ("reverts by itself 30m after it is applied", None),
    ]
    [(reverts, at)] = view_deadlines(None, None, NOW + 90 * SEC)
    assert reverts == "reverts at 2026-05-01 12:01:30 UTC" and at == NOW + 90 * SEC
