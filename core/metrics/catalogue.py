"""What is counted: every counter and histogram, its labels and what it means, in one place;
and how a count of one series is named in Redis (a field of the workspace's counts hash).

A field is the series' name and its label values joined by ``|``: ``commits``,
``rejections|conflict``, ``model_call_seconds.le|classify|0.5`` (a histogram keeps one
field per bucket, each observation in exactly one, and the sum of its observations in
microseconds: ``model_call_seconds.sum_us|classify``). A reader turns them back into series
(``core.metrics.reading``); fields it does not know (another release's) are skipped."""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass

from core.state.commit_result import RejectReason

__all__ = [
    "CLASSIFIED",
    "COMMITS",
    "COUNTERS",
    "HISTOGRAMS",
    "MODEL_CALLS",
    "MODEL_CALL_SECONDS",
    "PROPOSALS",
    "REJECTIONS",
    "RULE_EVALUATIONS",
    "RULE_STEPS",
    "SEPARATOR",
    "TURNS",
    "Counter",
    "Histogram",
    "label_value",
]

SEPARATOR = "|"
MAX_LABEL_CHARS = 64


def label_value(text: str) -> str:
    """A label value as a field holds it: without the separator, and short."""
    return text.replace(SEPARATOR, "_")[:MAX_LABEL_CHARS] or "-"


@dataclass(frozen=True)
class Counter:
    """``known``: the values of its one label, each shown (as 0) before its first count, so
    a rate starts with the first one; a counter without labels is always shown."""

    name: str
    labels: tuple[str, ...]
    help: str
    known: tuple[str, ...] = ()

    def field(self, values: tuple[str, ...]) -> str:
        if len(values) != len(self.labels):
            raise ValueError(f"{self.name} takes {self.labels}, not {values}")
        if not values:  # its name alone (every commit counts one of these)
            return self.name
        return SEPARATOR.join((self.name, *(label_value(v) for v in values)))


@dataclass(frozen=True)
class Histogram:
    """``bounds``: the buckets' upper bounds in seconds (``+Inf`` is added)."""

    name: str
    labels: tuple[str, ...]
    help: str
    bounds: tuple[float, ...]

    @property
    def bucket_series(self) -> str:
        return f"{self.name}.le"

    @property
    def sum_series(self) -> str:
        return f"{self.name}.sum_us"

    @property
    def les(self) -> tuple[str, ...]:
        """The buckets' names, ``+Inf`` last."""
        return (*(_le(b) for b in self.bounds), "+Inf")

    def bucket_field(self, values: tuple[str, ...], seconds: float) -> str:
        """The field of the one bucket ``seconds`` falls in (``le``: at most its bound)."""
        if len(values) != len(self.labels):
            raise ValueError(f"{self.name} takes {self.labels}, not {values}")
        le = self.les[bisect_left(self.bounds, seconds)]
        return SEPARATOR.join((self.bucket_series, *(label_value(v) for v in values), le))

    def sum_field(self, values: tuple[str, ...]) -> str:
        return SEPARATOR.join((self.sum_series, *(label_value(v) for v in values)))


def _le(bound: float) -> str:
    """A bound as Prometheus writes it (``0.5``, ``1.0``)."""
    return repr(float(bound)) if math.isfinite(bound) else "+Inf"


COMMITS = Counter(
    "commits",
    (),
    "Mutations committed through the gateway (a retried mutation id, answered with its first "
    "result, is not counted again).",
)
REJECTIONS = Counter(
    "rejections",
    ("reason",),
    "Changes and clicks the gateway refused, by reason: the policy's (not_allowed, schema, "
    "forbidden, protected, agent_denied, rate_limited), the store's (conflict, not_found, "
    "type) and a proposal's (expired, stale). A click on a proposal whose key moved on is "
    "counted once, as the conflict its commit met; the proposal counts as stale.",
    tuple(reason.value for reason in RejectReason),
)
PROPOSALS = Counter(
    "proposals",
    ("event",),
    "Proposals waiting for a person: created, and how each ended (applied: its change "
    "committed; discarded; expired: its deadline passed; stale: its key moved on).",
    ("created", "applied", "discarded", "expired", "stale"),
)
TURNS = Counter("turns", (), "What people said to the bot: one per message the runtime was given.")
CLASSIFIED = Counter(
    "classified_turns",
    ("label", "classifier"),
    "Turns by the act the classifier read in them (brainstorm, refine, commit, question, "
    "tangent) and the classifier that did (embedded, llm; the embedded one when the model "
    "failed).",
)
MODEL_CALLS = Counter(
    "model_calls",
    ("purpose", "outcome"),
    "Model calls by purpose (classify, generate) and outcome: ok; error (no answer: a "
    "timeout, a refused connection, an HTTP error); invalid (an answer that could not be "
    "used). Each failure falls back to the offline parts.",
)
MODEL_CALL_SECONDS = Histogram(
    "model_call_seconds",
    ("purpose",),
    "How long a model call took (until its answer, or its failure), by purpose.",
    (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0),
)
RULE_EVALUATIONS = Counter(
    "rule_evaluations",
    ("outcome",),
    "Rule evaluations of committed mutations: fired (a run was queued), skipped (the "
    "condition did not hold, or a cooldown or mode held it back), waiting (a for-timer "
    "started), cut (the cause chain was too deep), error (the engine failed on a mutation).",
    ("fired", "skipped", "waiting", "cut", "error"),
)
RULE_STEPS = Counter(
    "rule_steps",
    ("outcome",),
    "Steps of rule runs on the workers: done, failed (for good: the run stops), retry "
    "(failed, and tried again later), skipped (not run: an unset variable, a stopped run, "
    "a lost lease).",
    ("done", "failed", "retry", "skipped"),
)

COUNTERS: tuple[Counter, ...] = (
    COMMITS,
    REJECTIONS,
    PROPOSALS,
    TURNS,
    CLASSIFIED,
    MODEL_CALLS,
    RULE_EVALUATIONS,
    RULE_STEPS,
)
HISTOGRAMS: tuple[Histogram, ...] = (MODEL_CALL_SECONDS,)
