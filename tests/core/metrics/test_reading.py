"""Reading counts back as series: label values as counted, histogram buckets cumulative as
Prometheus has them, fields of another release skipped; and the gauges read when asked
(proposals pending with their deadline ahead, the log's length, a Redis round trip)."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import Pending
from core.metrics import (
    CLASSIFIED,
    COMMITS,
    MODEL_CALL_SECONDS,
    REJECTIONS,
    Meter,
    counts_key,
    read_gauges,
    round_trip_sec,
)
from core.redis.client import RedisClient
from core.state.commit_result import Committed
from tests.conftest import write_config
from tests.core.metrics.counted import counted
from tests.factories import actor, mutation

GUARDED = """
policy:
  keys:
    - pattern: "guarded.*"
      protected: true
    - pattern: "decision.*"
"""


@pytest.fixture
def counted_in(redis_client: RedisClient) -> str:
    return f"metrics-{uuid.uuid4().hex[:12]}"


@pytest.fixture(autouse=True)
def _no_counts_left(redis_client: RedisClient, counted_in: str) -> object:
    yield None
    redis_client.delete(counts_key(counted_in))


@pytest.mark.parametrize(
    ("seconds", "le"),
    [(0.0, "0.05"), (0.05, "0.05"), (0.0501, "0.1"), (1.0, "1.0"), (60.0, "60.0"), (61, "+Inf")],
)
def test_an_observation_falls_in_the_first_bucket_that_holds_it(seconds: float, le: str) -> None:
    field = MODEL_CALL_SECONDS.bucket_field(("classify",), seconds)
    assert field == f"model_call_seconds.le|classify|{le}"


def test_a_histogram_reads_back_cumulative_with_its_sum(
    redis_client: RedisClient, counted_in: str
) -> None:
    meter = Meter.of(redis_client, counted_in)
    for seconds in (0.03, 0.3, 0.3, 99.0):
        meter.observe(MODEL_CALL_SECONDS, seconds, "generate")
    [(labels, seen)] = counted(redis_client, counted_in).histogram(MODEL_CALL_SECONDS).items()
    assert labels == ("generate",)
    buckets = dict(seen.buckets)
    assert (buckets["0.05"], buckets["0.25"], buckets["0.5"], buckets["60.0"]) == (1, 1, 3, 3)
    assert seen.buckets[-1] == ("+Inf", 4) and seen.count == 4
    assert seen.sum_sec == pytest.approx(99.63)


def test_label_values_are_kept_as_counted_and_unknown_fields_skipped(
    redis_client: RedisClient, counted_in: str
) -> None:
    meter = Meter.of(redis_client, counted_in)
    meter.count(CLASSIFIED, "brainstorm", "llm")
    meter.count(CLASSIFIED, "brain|storm", "llm")  # the separator cannot split a series
    meter.count(COMMITS)
    redis_client.hset(counts_key(counted_in), mapping={"gone|x": 5, "commits|extra": 7})
    seen = counted(redis_client, counted_in)
    assert seen.series(CLASSIFIED) == {("brainstorm", "llm"): 1, ("brain_storm", "llm"): 1}
    assert seen.get(COMMITS) == 1
    assert seen.series(REJECTIONS)[("conflict",)] == 0  # a known reason, shown at 0


def test_gauges_count_pending_proposals_with_their_deadline_ahead_and_the_log(
    tmp_path: Path, server_redis: Redis, workspace: str
) -> None:
    app: App = build_app(workspace, write_config(tmp_path, GUARDED), client=server_redis)
    assert read_gauges(app.redis, workspace).pending_proposals == 0
    for value in ("a", "b"):
        assert isinstance(app.gateway.propose(mutation("set", "decision.x", value)), Committed)
    waiting = app.gateway.propose(mutation("set", "guarded.a", "on", "agent:llm"))
    assert isinstance(waiting, Pending)
    due = MutationGateway(app.store, app.policy, proposal_expiry_ms=0)  # due at once
    assert isinstance(due.propose(mutation("set", "guarded.b", "on", "agent:llm")), Pending)
    later = read_gauges(app.redis, workspace)
    assert (later.pending_proposals, later.log_length) == (1, 2)
    app.gateway.discard_proposal(waiting.proposal.id, actor("moderator:mo"))
    assert read_gauges(app.redis, workspace).pending_proposals == 0
    assert dataclasses.astuple(read_gauges(app.redis, "never-used")) == (0, 0)


def test_a_round_trip_is_timed(redis_client: RedisClient) -> None:
    assert 0 < round_trip_sec(redis_client) < 5
