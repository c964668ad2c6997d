"""Deadlines as people read them (``core.time_phrases``): in UTC to the second, and how far off
against the server's now, "in 25 min" ahead and "3 min ago" once past, never negative;
each phrase names its deadline for what it is (expires, escalates, reverts) and says it
past as past."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from core.gateway.outcome import expired_message
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
        (-300, "1 s ago"),  # a deadline just missed is past, not "now"
        (-1, "1 s ago"),
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


SAID_AT = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC \(([^)]*)\)")
YEAR_2100 = 4_102_444_800_000


def past_phrases(deadline: int, now: int) -> list[str]:
    """Every phrase a deadline gone by at ``now`` is said in."""
    return [
        moment_text(deadline, now),
        expiry_phrase(deadline, now),
        expired_message(deadline, now),
        escalation_phrase(deadline, None, now),
        escalation_phrase(deadline - HOUR, deadline, now),
        revert_phrase(deadline, now, by="revert-m1"),
        TimedChange("m1", deadline, "revert-m1", "reverted").phrase(now),
        TimedChange("m1", deadline, "revert-m1", "refused").phrase(now),
        *(phrase for phrase, _ in view_deadlines(deadline, None, deadline, now)),
    ]


@given(
    deadline=st.integers(min_value=HOUR, max_value=YEAR_2100),
    behind=st.integers(min_value=1, max_value=400 * DAY),
)
def test_a_past_deadline_is_said_to_the_second_and_as_so_long_ago(
    deadline: int, behind: int
) -> None:
    """However little or long ago: the moment to the second, then "… ago" with a span of
    at least one of its unit, never "in …", "now" or a negative time."""
    for phrase in past_phrases(deadline, deadline + behind):
        found = SAID_AT.search(phrase)
        assert found is not None, phrase
        at, relative = found.groups()
        assert at == datetime.fromtimestamp(deadline // 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
        assert relative.endswith(" ago") and "-" not in relative, phrase
        amounts = [int(n) for n in re.findall(r"\d+", relative)]
        assert amounts and amounts[0] >= 1 and all(n >= 0 for n in amounts), phrase


@given(ahead=st.integers(min_value=1, max_value=400 * DAY))
@example(ahead=500)
@example(ahead=501)
def test_a_deadline_ahead_is_never_said_as_past(ahead: int) -> None:
    """Ahead by half a second or less it is "now"; else "in …", never "… ago"."""
    for phrase in (moment_text(NOW + ahead, NOW), expiry_phrase(NOW + ahead, NOW)):
        found = SAID_AT.search(phrase)
        assert found is not None and not phrase.startswith("expired"), phrase
        relative = found.group(2)
        assert relative == "now" if ahead <= 500 else relative.startswith("in "), phrase
        assert "ago" not in relative and "-" not in relative
