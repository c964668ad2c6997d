"""A replay's pace: the median of its runs' records per second, timed by the clock it is
given (here a list of moments, so that every figure is known)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable

from hypothesis import given
from hypothesis import strategies as st

from core.state.replay import Pace


def clock(moments: Iterable[float]) -> Callable[[], float]:
    return iter(moments).__next__


def test_the_rate_is_the_median_of_the_laps_not_their_mean() -> None:
    pace = Pace(clock([0.0, 1.0, 2.0, 12.0, 13.0]))  # 1 s, 1 s, a 10 s stall, 1 s
    for _ in range(4):
        pace.lap(1000)
    assert pace.rates == [1000.0, 1000.0, 100.0, 1000.0]
    assert pace.rate == 1000.0


def test_no_records_or_no_time_makes_no_lap() -> None:
    pace = Pace(clock([5.0, 5.0, 6.0, 7.0]))
    pace.lap(10)  # the clock did not move: no rate can be said
    pace.lap(0)  # an empty last run
    assert pace.rate is None
    pace.lap(3)
    assert pace.rate == 3.0


@given(
    laps=st.lists(
        st.tuples(st.integers(1, 5000), st.floats(1e-6, 100.0, allow_nan=False)),
        min_size=1,
        max_size=30,
    )
)
def test_the_rate_lies_between_the_slowest_and_the_fastest_lap(
    laps: list[tuple[int, float]],
) -> None:
    moments, now = [0.0], 0.0
    for _, seconds in laps:
        now += seconds
        moments.append(now)
    pace = Pace(clock(moments))
    for records, _ in laps:
        pace.lap(records)
    assert pace.rate is not None
    assert min(pace.rates) <= pace.rate <= max(pace.rates)
    assert pace.rate == statistics.median(pace.rates)
    assert len(pace.rates) == len(laps)
