"""Scripts sent together (``core.state.scripts.together``): one round trip, on one server and
on a cluster (where redis-py's own pipeline would ask a server for each script's keys
first); a script the server never ran is sent whole in a second; a failing one raises, the
others having run. Counted on a real client of the suite's Redis."""

from __future__ import annotations

import uuid

import pytest
from redis.exceptions import ResponseError

from core.redis.client import RedisClient
from core.state.keys import WorkspaceKeys
from core.state.scripts import LuaScript, ScriptCall, together
from tests.round_trips import counting_copy


def unseen(client: RedisClient, body: str) -> LuaScript:
    """A script no server has run yet (its own comment makes its SHA new)."""
    return LuaScript(client, f"-- {uuid.uuid4().hex}\n{body}")


def test_scripts_sent_together_take_one_round_trip_and_one_more_when_unknown(
    redis_client: RedisClient, workspace: str
) -> None:
    client, trips = counting_copy(redis_client)
    keys = WorkspaceKeys(workspace)
    setting = unseen(client, "redis.call('SET', KEYS[1], ARGV[1]); return 'set'")
    getting = unseen(client, "return redis.call('GET', KEYS[1])")
    calls = [
        ScriptCall(setting, [keys.entry("a")], ["one"]),
        ScriptCall(getting, [keys.entry("a")], []),
    ]
    client.get(keys.entry("a"))  # connected to the workspace's server (its shard)
    with trips.counting():
        assert together(client, calls) == ["set", "one"]
    assert trips.count == 2  # both NOSCRIPT, then both sent whole
    calls[0] = ScriptCall(setting, [keys.entry("a")], ["two"])
    with trips.counting():
        assert together(client, calls) == ["set", "two"]
    assert trips.count == 1
    client.close()


def test_a_script_that_fails_raises_after_the_others_ran(
    redis_client: RedisClient, workspace: str
) -> None:
    keys = WorkspaceKeys(workspace)
    setting = unseen(redis_client, "redis.call('SET', KEYS[1], ARGV[1]); return 'set'")
    failing = unseen(redis_client, "return redis.error_reply('refused here')")
    calls = [
        ScriptCall(failing, [keys.entry("b")], []),
        ScriptCall(setting, [keys.entry("b")], ["ran"]),
    ]
    with pytest.raises(ResponseError, match="refused here"):
        together(redis_client, calls)
    assert redis_client.get(keys.entry("b")) == "ran"
