"""The Redis clients canonical state runs on: one server (``redis.Redis``), or a Redis
Cluster (``redis.cluster.RedisCluster``), where each workspace's keys share one hash slot,
so one shard holds all of them and every script and transaction of a workspace runs there.

The two clients share their commands but not a class: code that takes either names
``RedisClient``, and a pipeline of either ``RedisPipeline``. Nothing in a pipeline or a
script may touch two workspaces, or no key at all (see ``core.state.scripts.server_ms``)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import TypeAlias, TypeVar

from redis import ConnectionPool, Redis
from redis.client import Pipeline
from redis.cluster import ClusterNode, ClusterPipeline, RedisCluster
from redis.exceptions import (
    AskError,
    AuthenticationError,
    AuthorizationError,
    ClusterDownError,
    ConnectionError,
    RedisClusterException,
    SlotNotCoveredError,
    TimeoutError,
    TryAgainError,
    WatchError,
)

__all__ = [
    "INTERRUPTED",
    "RedisClient",
    "RedisPipeline",
    "disconnect",
    "follow_slots",
    "interrupted",
    "resend",
    "shard_of",
    "timed_copy",
    "watch_broken",
]

T = TypeVar("T")

RedisClient: TypeAlias = Redis | RedisCluster
RedisPipeline: TypeAlias = Pipeline | ClusterPipeline

# a command cut off by a server's death, a failover or a slot moving: worth sending again
# (once the cluster's slot map is read again) when sending it twice is harmless
INTERRUPTED: tuple[type[Exception], ...] = (
    ConnectionError,
    TimeoutError,
    ClusterDownError,
    TryAgainError,
    AskError,  # MOVED too
    SlotNotCoveredError,  # the slot map has a hole (its primary failed, none promoted yet)
)


def interrupted(error: BaseException) -> bool:
    """Whether ``error`` cut a command off (worth sending again), rather than refused it: a
    wrong password or a missing permission is a ``ConnectionError`` too, but never heals."""
    refused = isinstance(error, AuthenticationError | AuthorizationError)
    return isinstance(error, INTERRUPTED) and not refused


def watch_broken(error: WatchError) -> ConnectionError | None:
    """redis-py reports a connection lost during a WATCH as a ``WatchError`` ("A
    TimeoutError occurred while watching one or more keys"): retried as a conflict, a WATCH
    loop would spin for as long as Redis is away. The connection error it stands for, or
    None for a true conflict (a watched key changed)."""
    said = str(error)
    return ConnectionError(said) if "occurred while watching" in said else None


def shard_of(client: RedisClient, key: str) -> Redis:
    """A client of the one server that holds ``key``'s slot now (``client`` itself when it
    is one server): for commands that must share a connection with a write, like ``WAIT``,
    which counts the replicas that hold *this connection's* writes."""
    if not isinstance(client, RedisCluster):
        return client
    node = client.get_node_from_key(key)  # type: ignore[no-untyped-call]
    shard: Redis | None = client.get_redis_connection(node)
    if shard is None:
        raise RedisClusterException(f"no connection to {node.name}, which serves {key}")
    return shard


def follow_slots(client: RedisClient) -> None:
    """After an interruption: a cluster client reads the slot map again, so that the next
    command goes to the promoted replica (a single server's pool reconnects by itself)."""
    if isinstance(client, RedisCluster):
        # not yet readable (slots uncovered, nodes down): the next command fails again, and
        # the caller's next attempt calls this again
        with contextlib.suppress(RedisClusterException, ConnectionError, TimeoutError):
            client.nodes_manager.initialize()


def resend(call: Callable[[], T], client: RedisClient, budget_sec: float) -> T:
    """``call()``, made again while it is ``interrupted`` (waits from 50 ms, doubling to a
    quarter of a second, the slot map read again before each) for up to ``budget_sec``;
    past it, the last interruption is raised. Only for calls that may safely run twice."""
    deadline = time.monotonic() + budget_sec
    pause = 0.05
    while True:
        try:
            return call()
        except INTERRUPTED as error:
            left = deadline - time.monotonic()
            if left <= 0 or not interrupted(error):
                raise
            time.sleep(min(pause, left))  # a promotion takes a few seconds
            pause = min(pause * 2, 0.25)  # a few tries a second: quick to see a promotion
            follow_slots(client)


def timed_copy(client: RedisClient, timeout: float) -> RedisClient:
    """A client of its own to the same server or cluster as ``client``, whose reads and
    connects time out after ``timeout`` seconds."""
    timeouts = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
    if isinstance(client, RedisCluster):
        # redis-py leaves the cluster client's helpers unannotated, hence the ignores
        kwargs = dict(client.get_connection_kwargs(), **timeouts)  # type: ignore[no-untyped-call]
        kwargs.pop("redis_connect_func", None)  # the cluster client sets its own
        nodes = [
            ClusterNode(n.host, n.port)  # type: ignore[no-untyped-call]
            for n in client.get_nodes()  # type: ignore[no-untyped-call]
        ]
        return RedisCluster(startup_nodes=nodes, **kwargs)
    pool = client.connection_pool
    kwargs = dict(pool.connection_kwargs, **timeouts)
    return Redis(connection_pool=ConnectionPool(connection_class=pool.connection_class, **kwargs))


def disconnect(client: RedisClient) -> None:
    """Close every connection ``client`` holds (a cluster client: to every node)."""
    if isinstance(client, RedisCluster):
        client.close()
    else:
        client.connection_pool.disconnect()
