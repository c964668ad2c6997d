"""Which workspaces hold data, from the keys themselves: one with committed state is found
by the walk and by name; one holding only what activity leaves behind (a session, a
delivery mark, metrics) is not; keys that merely look alike are ignored; and a walk cut
short says so. When one was last written: its newest commit, trace or decision, a key of
another type planted where a stream belongs counting as none."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from bot.redis.keyspace import census, holds_data, last_written
from core.redis.client import RedisClient
from core.state.keys import WorkspaceKeys, workspace_of_data_key
from core.state.scripts import server_ms
from core.state.store import StateStore
from tests.conftest import delete_workspace
from tests.factories import mutation


@pytest.fixture
def names(redis_client: RedisClient) -> Iterator[tuple[str, str]]:
    made = (f"census-{uuid.uuid4().hex[:8]}", f"census-{uuid.uuid4().hex[:8]}")
    yield made
    for name in made:
        delete_workspace(redis_client, name)


def test_a_workspace_with_state_is_found_and_one_with_only_traces_of_activity_is_not(
    redis_client: RedisClient, names: tuple[str, str]
) -> None:
    written, passing = names
    StateStore(redis_client, written).commit(mutation("set", "decision.db", "postgres"))
    keys = WorkspaceKeys(passing)
    redis_client.hset(keys.session("slack:C1:1.2"), "data", "{}")
    redis_client.set(keys.delivery("slack", "Ev1"), "1")
    redis_client.hset(keys.metrics, "turns", 1)
    found = census(redis_client)
    assert written in found.workspaces and passing not in found.workspaces
    assert found.complete
    assert holds_data(redis_client, written) and not holds_data(redis_client, passing)


def test_keys_that_only_look_like_a_workspaces_are_ignored() -> None:
    assert workspace_of_data_key("{ws:demo}:versions") == "demo"
    assert workspace_of_data_key("{ws:demo}:proposals") == "demo"
    for other in (
        "{ws:demo}:entry:decision.db",
        "{ws:demo}:versionsx",
        "{ws:demo}:proposal:p1",
        "{ws:demo}:log",  # made empty for the rules consumer group when a workspace opens
        "{ws:}:versions",
        "{ws:a b}:versions",
        "{deliberate}:workspaces",
        "ws:demo:log",
    ):
        assert workspace_of_data_key(other) is None, other


def test_a_walk_cut_short_says_it_is_incomplete(
    redis_client: RedisClient, names: tuple[str, str]
) -> None:
    for name in names:
        StateStore(redis_client, name).commit(mutation("set", "decision.db", name))
    # one call looking at one key cannot see the whole (counted by SCAN on every primary:
    # a cluster client's DBSIZE asks one node)
    held = [k for n in names for k in redis_client.scan_iter(match=WorkspaceKeys(n).every_key)]
    assert len(held) > 2
    short = census(redis_client, calls=1, count=1)
    assert not short.complete


def test_last_written_is_the_newest_commit_trace_or_decision(
    redis_client: RedisClient, names: tuple[str, str]
) -> None:
    written, planted = names
    assert last_written(redis_client, written) == 0
    store = StateStore(redis_client, written)
    before = server_ms(redis_client, store.keys.versions)
    store.commit(mutation("set", "decision.db", "postgres"))
    after = server_ms(redis_client, store.keys.versions)
    assert before <= last_written(redis_client, written) <= after
    keys = WorkspaceKeys(planted)
    redis_client.set(keys.trace, "not a stream")  # what no program of ours writes
    redis_client.hset(keys.decisions, "a", "b")
    assert last_written(redis_client, planted) == 0
    StateStore(redis_client, planted).commit(mutation("set", "decision.db", "mysql"))
    assert last_written(redis_client, planted) >= after
