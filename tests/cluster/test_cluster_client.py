"""The cluster client a ``redis+cluster://`` URL builds: it carries the URL's options to every
node, hands other processes a URL that reaches the same cluster, finds a workspace's keys on
whichever shard holds them (and every workspace holding data, across the shards), and makes
a copy with timeouts of its own (the rules' leases)."""

from __future__ import annotations

import uuid

import pytest
from redis import Redis
from redis.cluster import RedisCluster
from redis.exceptions import MovedError

from bot.redis.connection import connect, connection_url
from bot.redis.keyspace import census, holds_data
from core.deliberation.session import Session
from core.redis.client import disconnect, resend, timed_copy
from core.runtime.sessions import SessionStore
from core.state.keys import WorkspaceKeys
from core.state.scripts import LuaScript, ScriptCall, together
from core.state.store import StateStore
from tests.conftest import delete_workspace
from tests.factories import mutation
from tests.servers.redis_cluster import LocalCluster


def test_the_urls_options_reach_every_node_and_its_url_reaches_the_same_cluster(
    cluster: LocalCluster,
) -> None:
    client = connect(f"{cluster.url}?socket_timeout=4.5&socket_connect_timeout=2")
    try:
        assert isinstance(client, RedisCluster)
        for node in client.get_primaries():
            kwargs = node.redis_connection.connection_pool.connection_kwargs
            assert kwargs["socket_timeout"] == 4.5 and kwargs["socket_connect_timeout"] == 2
        url = connection_url(client)
        primaries = {n.address for n in cluster.nodes if n.role() == "master"}
        assert url.startswith("redis+cluster://") and set(url[16:].split(",")) == primaries
        again = connect(url)
        assert isinstance(again, RedisCluster) and again.ping()
        again.close()
    finally:
        client.close()


def test_a_workspaces_keys_are_found_on_its_shard_and_deleted_there(
    cluster: LocalCluster,
) -> None:
    client = connect(cluster.url)
    names = [f"scan-{uuid.uuid4().hex[:8]}-{n}" for n in range(6)]
    try:
        for name in names:
            StateStore(client, name).commit(mutation("set", "decision.db", name))
        shards = {cluster.primary_of(WorkspaceKeys(n).versions).port for n in names}
        assert len(shards) > 1  # six workspaces do not all land on one of three primaries
        for name in names:
            found = list(client.scan_iter(match=WorkspaceKeys(name).every_key, count=1000))
            assert WorkspaceKeys(name).log in found and all(name in k for k in found)
            delete_workspace(client, name)
            assert list(client.scan_iter(match=WorkspaceKeys(name).every_key)) == []
    finally:
        for name in names:
            delete_workspace(client, name)
        client.close()


def test_every_workspace_holding_data_is_found_whichever_shard_holds_it(
    cluster: LocalCluster,
) -> None:
    client = connect(cluster.url)
    names = [f"census-{uuid.uuid4().hex[:8]}-{n}" for n in range(6)]
    try:
        for name in names:
            StateStore(client, name).commit(mutation("set", "decision.db", name))
        assert len({cluster.primary_of(WorkspaceKeys(n).versions).port for n in names}) > 1
        found = census(client)
        assert found.complete and set(names) <= set(found.workspaces)
        assert all(holds_data(client, name) for name in names)
        assert not holds_data(client, f"census-{uuid.uuid4().hex[:8]}-none")
    finally:
        for name in names:
            delete_workspace(client, name)
        client.close()


def test_a_timed_copy_reaches_the_same_cluster_with_its_own_timeouts(
    cluster: LocalCluster,
) -> None:
    client = connect(cluster.url)
    copy = timed_copy(client, 0.25)
    key = "{ws:timed}:probe"
    try:
        assert isinstance(copy, RedisCluster) and copy is not client
        client.set(key, "seen")
        assert copy.get(key) == "seen"
        for node in copy.get_primaries():
            kwargs = node.redis_connection.connection_pool.connection_kwargs
            assert kwargs["socket_timeout"] == 0.25 == kwargs["socket_connect_timeout"]
    finally:
        client.delete(key)
        disconnect(copy)
        client.close()


def test_scripts_sent_together_to_a_shard_that_lost_the_slot_are_sent_again_where_it_is(
    cluster: LocalCluster,
) -> None:
    """``together`` pipelines to the shard its client's slot map names: with that map out of
    date, the shard answers MOVED (nothing ran), which the caller's ``resend`` takes for an
    interruption: the map read again, the scripts run where the slot is now."""
    client = connect(cluster.url)
    workspace = f"moved-{uuid.uuid4().hex[:8]}"
    key = WorkspaceKeys(workspace).entry("decision.db")
    setting = LuaScript(client, "redis.call('SET', KEYS[1], ARGV[1]); return 'set'")
    calls = [ScriptCall(setting, [key], ["here"])]
    try:
        holder = client.get_node_from_key(key)
        other = next(n for n in client.get_primaries() if n.name != holder.name)
        client.nodes_manager.slots_cache[client.keyslot(key)] = [other]  # (as after a move)
        with pytest.raises(MovedError):
            together(client, calls)
        assert resend(lambda: together(client, calls), client, 5) == ["set"]
        assert client.get_node_from_key(key).name == holder.name
        assert client.get(key) == "here"
    finally:
        delete_workspace(client, workspace)
        client.close()


def test_a_save_sent_with_scripts_during_a_slot_migration_follows_ask(
    cluster: LocalCluster,
) -> None:
    """While the workspace's slot migrates (resharding a live cluster), a key already moved
    is answered ASK by the shard the slot map names: a script ``SessionStore.store_along``
    sends with the save (an Undo's lookup) is followed to where the key is, as the cluster
    client follows it for a script sent alone, not refused until the migration ends."""
    client = connect(cluster.url)
    assert isinstance(client, RedisCluster)
    workspace = f"asking-{uuid.uuid4().hex[:8]}"
    keys = WorkspaceKeys(workspace)
    sessions = SessionStore(client, workspace, 60)
    moved = keys.entry("moved")
    slot = client.keyslot(moved)
    source = client.get_node_from_key(moved)
    target = next(n for n in client.get_primaries() if n.name != source.name)
    at_source, at_target = Redis(source.host, source.port), Redis(target.host, target.port)
    first = sessions.save(Session(id="s1"))  # the session's key stays where it is
    assert first is not None
    reading = LuaScript(client, "return redis.call('GET', KEYS[1])")
    try:
        at_target.execute_command(
            "CLUSTER", "SETSLOT", slot, "IMPORTING", at_source.cluster("MYID")
        )
        at_source.execute_command(
            "CLUSTER", "SETSLOT", slot, "MIGRATING", at_target.cluster("MYID")
        )
        asking = at_target.pipeline(transaction=False)  # (one connection: ASKING, then SET)
        asking.execute_command("ASKING").set(moved, "there")
        asking.execute()
        changed = first.with_interaction(first.interaction.model_copy(update={"topic": "db"}))
        along = [ScriptCall(reading, [moved], [])]
        stored, replies = sessions.store_along(first, changed, "t-1", along=along)
        assert stored.saved and stored.session.interaction.topic == "db"
        assert replies == ["there"]
        assert sessions.load("s1").interaction.topic == "db"
    finally:
        asking = at_target.pipeline(transaction=False)
        asking.execute_command("ASKING").delete(moved)
        asking.execute()
        for node in (at_target, at_source):  # the slot the source's alone again
            node.execute_command("CLUSTER", "SETSLOT", slot, "STABLE")
        delete_workspace(client, workspace)
        at_source.close()
        at_target.close()
        client.close()
