"""Metrics: counts every process makes (commits, rejections, proposals, turns, classifier
labels, model calls, rule evaluations and steps) kept in Redis, so that ``deliberate web``
serves their sums at ``/metrics``; and what is read when it is asked (proposals pending,
the log's length, a Redis round trip). ``catalogue`` says what each series means."""

from core.metrics.catalogue import (
    CLASSIFIED,
    COMMITS,
    COUNTERS,
    HISTOGRAMS,
    MODEL_CALL_SECONDS,
    MODEL_CALLS,
    PROPOSALS,
    REJECTIONS,
    RULE_EVALUATIONS,
    RULE_STEPS,
    TURNS,
    Counter,
    Histogram,
)
from core.metrics.meter import Meter
from core.metrics.reading import (
    Counts,
    Gauges,
    HistogramCounts,
    read_counts,
    read_gauges,
    read_workspace,
    round_trip_sec,
)
from core.metrics.tally import FLUSH_SEC, Tally, counts_key, flush_all, tally_for

__all__ = [
    "CLASSIFIED",
    "COMMITS",
    "COUNTERS",
    "FLUSH_SEC",
    "HISTOGRAMS",
    "MODEL_CALLS",
    "MODEL_CALL_SECONDS",
    "PROPOSALS",
    "REJECTIONS",
    "RULE_EVALUATIONS",
    "RULE_STEPS",
    "TURNS",
    "Counter",
    "Counts",
    "Gauges",
    "Histogram",
    "HistogramCounts",
    "Meter",
    "Tally",
    "counts_key",
    "flush_all",
    "read_counts",
    "read_gauges",
    "read_workspace",
    "round_trip_sec",
    "tally_for",
]
