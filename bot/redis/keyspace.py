"""Which workspaces hold data, and when each was last written, read from the keys themselves:
a workspace written with ``--workspace``, or by a process whose config listed it and no longer
does, is in no directory, and the directory hears of the bots' events alone. ``holds_data``
asks about one workspace (one ``EXISTS`` of its ``DATA_KEYS``, on the shard that holds its
slot); ``census`` walks the keyspace with ``SCAN`` and a ``MATCH`` pattern, each server of a
Redis Cluster in turn, for a bounded number of calls; ``last_written`` reads the newest entry
of a workspace's streams."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from redis import Redis
from redis.client import NEVER_DECODE
from redis.cluster import RedisCluster
from redis.exceptions import AskError, RedisClusterException, ResponseError

from core.redis.client import RedisClient, shard_of
from core.state.codec import text
from core.state.keys import WorkspaceKeys, data_key_pattern, workspace_of_data_key
from core.state.streams import raw_range, stream_ms

__all__ = ["SCAN_CALLS", "SCAN_COUNT", "Census", "census", "holds_data", "last_written"]

SCAN_COUNT = 1000  # keys a SCAN call looks at (Redis's hint)
SCAN_CALLS = 500  # SCAN calls per server: half a million keys looked at, at most, on each


@dataclass(frozen=True)
class Census:
    """``workspaces``: sorted by name. ``complete``: False when a server's keyspace was
    larger than the walk may look at (a workspace may hold data and be missing)."""

    workspaces: list[str]
    complete: bool


def holds_data(redis: RedisClient, workspace: str) -> bool:
    """Whether any of ``workspace``'s ``DATA_KEYS`` exists (all share its slot: one call)."""
    return bool(redis.exists(*WorkspaceKeys(workspace).data_keys))


def last_written(redis: RedisClient, workspace: str) -> int:
    """When ``workspace`` last had a commit (its mutation log), a turn or a click (its
    trace) or a write refused or held for approval (its decisions), whoever made it (a bot,
    the console, the CLI, the worker or the web): the newest of those streams' entries, in
    the server's milliseconds; 0 when they hold none. A key of another type there (planted:
    no program of ours writes one) counts as none, so that it cannot stop a listing. One
    round trip, to the server that holds the workspace's slot (on a cluster that redirects
    it, each read alone). Only the entries' ids are used, read undecoded: a field that is
    not UTF-8 (planted) stops no listing either."""
    keys = WorkspaceKeys(workspace)
    streams = (keys.log, keys.trace, keys.decisions)
    try:
        with shard_of(redis, keys.log).pipeline(transaction=False) as pipe:
            for stream in streams:
                newest_of = ("XREVRANGE", stream, "+", "-", "COUNT", 1)  # (``raw_range``'s)
                pipe.execute_command(*newest_of, **{NEVER_DECODE: True})  # type: ignore[no-untyped-call]
            newest = pipe.execute(raise_on_error=False)
    except AskError:  # (MovedError is one too)
        newest = [_newest(redis, stream) for stream in streams]
    return max(
        (stream_ms(str(text(rows[0][0]))) for rows in newest if isinstance(rows, list) and rows),
        default=0,
    )


def _newest(redis: RedisClient, stream: str) -> object:
    try:
        return raw_range(redis, stream, "+", "-", 1, reverse=True)
    except ResponseError as exc:  # WRONGTYPE
        return exc


def census(redis: RedisClient, calls: int = SCAN_CALLS, count: int = SCAN_COUNT) -> Census:
    """Every workspace holding data that ``calls`` SCAN calls per server find."""
    found: set[str] = set()
    complete = True
    for server in _servers(redis):
        cursor, made = 0, 0
        while True:
            cursor, keys = server.scan(cursor, match=data_key_pattern(), count=count)
            made += 1
            for key in keys:
                name = workspace_of_data_key(str(text(key)))
                if name is not None:
                    found.add(name)
            if not cursor:
                break
            if made >= calls:
                complete = False
                break
    return Census(sorted(found), complete)


def _servers(redis: RedisClient) -> Iterator[Redis]:
    """The one server, or each primary of a cluster (SCAN reads one server's keys)."""
    if not isinstance(redis, RedisCluster):
        yield redis
        return
    for node in redis.get_primaries():  # type: ignore[no-untyped-call]
        server: Redis | None = redis.get_redis_connection(node)
        if server is None:
            raise RedisClusterException(f"no connection to {node.name}")
        yield server
