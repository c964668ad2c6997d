"""A pattern with ``ttl.max_sec`` never keeps a value for ever: a write without a ttl gets the
pattern's default, or is refused when it has none; whatever the op, whoever writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from core.gateway.outcome import Pending
from core.state.commit_result import Committed, Rejected, RejectReason
from tests.conftest import write_config
from tests.factories import actor, mutation

TTLS = """
policy:
  keys:
    - pattern: "capped.*"
      ttl: {max_sec: 60}
    - pattern: "count.*"
      type: integer
      ttl: {max_sec: 60}
    - pattern: "list.*"
      type: array
      ttl: {max_sec: 60}
    - pattern: "short.*"
      ttl: {default_sec: 5, max_sec: 60}
"""


@pytest.fixture
def ttl_app(tmp_path: Path, redis_client: Redis, workspace: str) -> App:
    return build_app(workspace, write_config(tmp_path, TTLS), client=redis_client)


@pytest.mark.parametrize(
    ("op", "key", "value"),
    [("set", "capped.a", "x"), ("incr", "count.a", 1), ("append", "list.a", "x")],
)
def test_no_ttl_under_a_maximum_without_default_is_refused(
    ttl_app: App, op: str, key: str, value: Any
) -> None:
    refused = ttl_app.gateway.propose(mutation(op, key, value))
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.SCHEMA
    assert "needs a ttl of at most 60s" in refused.message
    assert ttl_app.store.get(key) is None and len(ttl_app.log) == 0


@pytest.mark.parametrize(
    ("op", "key", "value"),
    [("set", "capped.b", "x"), ("incr", "count.b", 1), ("append", "list.b", "x")],
)
def test_a_ttl_within_the_maximum_commits_and_expires(
    ttl_app: App, op: str, key: str, value: Any
) -> None:
    done = ttl_app.gateway.propose(mutation(op, key, value, ttl_sec=30))
    assert isinstance(done, Committed) and done.entry is not None
    assert done.entry.expires_at == done.entry.updated_at + 30_000


@pytest.mark.parametrize(
    ("op", "key", "value"),
    [("set", "short.a", ["x"]), ("append", "short.b", "y"), ("incr", "short.c", 2)],
)
def test_no_ttl_gets_the_default_for_every_op(ttl_app: App, op: str, key: str, value: Any) -> None:
    done = ttl_app.gateway.propose(mutation(op, key, value))
    assert isinstance(done, Committed) and done.entry is not None
    assert done.entry.expires_at == done.entry.updated_at + 5_000
    assert done.mutation.ttl_sec == 5


def test_an_agents_proposal_without_ttl_is_refused_before_it_waits(ttl_app: App) -> None:
    refused = ttl_app.gateway.propose(mutation("set", "capped.c", "x", "agent:llm"))
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.SCHEMA
    waits = ttl_app.gateway.propose(mutation("set", "capped.c", "x", "agent:llm", ttl_sec=10))
    assert isinstance(waits, Pending)
    applied = ttl_app.gateway.apply_proposal(waits.proposal.id, actor("user:alice"), revision=0)
    assert isinstance(applied, Committed) and applied.entry is not None
    assert applied.entry.expires_at is not None
