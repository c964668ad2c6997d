"""Where canonical state lives: the Redis at ``REDIS_URL`` (one server, or a Redis Cluster
given as ``redis+cluster://host:port[,host:port…]``), or the embedded server of
``DELIBERATE_HOME`` (one detached redis-server per data directory, see
``bot.embedded_redis``); and what to tell a person when Redis fails."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

from redis import ConnectionPool, Redis, UnixDomainSocketConnection
from redis.backoff import ExponentialWithJitterBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.connection import parse_url
from redis.exceptions import (
    AskError,
    ClusterDownError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisClusterException,
    RedisError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from bot.embedded_redis import DEFAULT_HOME, EmbeddedServer, EmbeddedServerError, home_dir
from core.redis_client import RedisClient

__all__ = [
    "CLUSTER_SCHEMES",
    "DEFAULT_HOME",
    "EmbeddedConnection",
    "RedisTooOld",
    "connect",
    "connection_url",
    "embedded_client",
    "error_sentence",
    "home_dir",
    "server_name",
]

_REDIS_MIN = (6, 2)
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}


class RedisTooOld(RedisError):
    """The server answers, but is older than the commit script needs."""


def connect(redis_url: str | None = None) -> RedisClient:
    """A client with ``decode_responses`` on (a cluster client for a ``redis+cluster://``
    URL); checks the server, or every primary of the cluster, is at least Redis 6.2."""
    url = redis_url or os.environ.get("REDIS_URL")
    client: RedisClient
    if not url:
        client = embedded_client(home_dir())
    elif urlsplit(url).scheme in CLUSTER_SCHEMES:
        client = cluster_client(url)
    else:
        client = Redis.from_url(url, decode_responses=True)
    _check_version(client)
    return client


def cluster_client(url: str) -> RedisCluster:
    """A Redis Cluster client from ``redis+cluster://[user:password@]host:port[,host:port…]``
    (``rediss+cluster://`` for TLS; query options as in a ``redis://`` URL): any node that
    answers tells it the others, and it follows the slots when a replica is promoted."""
    parts = urlsplit(url)
    credentials, _, hosts = parts.netloc.rpartition("@")
    nodes = [_node(url, each) for each in hosts.split(",") if each.strip()]
    if not nodes:
        raise ValueError(f"{server_name(url)}: a cluster URL names at least one host:port")
    # the options redis-py reads from a node's URL (credentials, TLS, timeouts), read from
    # a URL of a node standing for all of them
    any_node = f"{credentials}@node" if credentials else "node"
    one = urlunsplit((CLUSTER_SCHEMES[parts.scheme], any_node, "", parts.query, ""))
    options = parse_url(one)  # type: ignore[no-untyped-call]
    for each in ("host", "port", "path"):
        options.pop(each, None)
    if int(options.pop("db", 0) or 0) != 0 or parts.path.strip("/") not in ("", "0"):
        raise ValueError(f"{server_name(url)}: a Redis Cluster has one database, 0")
    if options.pop("connection_class", None) is not None:  # rediss: TLS on every node
        options["ssl"] = True
    return RedisCluster(startup_nodes=nodes, decode_responses=True, **options)


def _node(url: str, text: str) -> ClusterNode:
    host, _, port = text.strip().rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"{server_name(url)}: {text.strip()!r} is not host:port")
    return ClusterNode(host.strip("[]"), int(port))  # type: ignore[no-untyped-call]


class EmbeddedConnection(UnixDomainSocketConnection):
    """A connection to a home's embedded server that starts the server when none answers:
    a command after a ``kill -9`` of the server, in this process or a long-running one (a
    worker, a bot), reconnects to its replacement instead of failing."""

    # redis-py leaves these methods unannotated, hence the ignores
    def __init__(self, home: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)  # type: ignore[no-untyped-call]
        self.home = home

    def _connect(self) -> socket.socket:
        try:
            sock: socket.socket = super()._connect()  # type: ignore[no-untyped-call]
        except OSError:
            EmbeddedServer(Path(self.home)).ensure_running()
            sock = super()._connect()  # type: ignore[no-untyped-call]
        return sock


def embedded_client(home: Path) -> Redis:
    """A client of ``home``'s server, once that answers: started when none runs, waited for
    while it loads its data (redis-py would retry LOADING for a few seconds, then fail)."""
    server = EmbeddedServer(home)
    server.ensure_running()
    pool = ConnectionPool(
        connection_class=EmbeddedConnection,
        path=str(server.socket),
        home=str(home),
        decode_responses=True,
        # what redis-py gives a client it builds its own pool for (a pool passed in gets no
        # retry): a command cut off by the server's death is sent again, on the replacement
        retry=Retry(ExponentialWithJitterBackoff(base=0.01, cap=1), 10),
    )
    return Redis(connection_pool=pool)


def connection_url(client: RedisClient) -> str:
    """A URL another process can connect with (for the embedded server: its unix socket;
    for a cluster: a ``redis+cluster://`` URL naming every primary it knows)."""
    if isinstance(client, RedisCluster):
        # redis-py leaves the cluster client's helpers unannotated, hence the ignores
        kwargs: dict[str, Any] = client.get_connection_kwargs()  # type: ignore[no-untyped-call]
        primaries = client.get_primaries()  # type: ignore[no-untyped-call]
        hosts = ",".join(f"{n.host}:{n.port}" for n in primaries)
        scheme = "rediss+cluster" if kwargs.get("ssl") else "redis+cluster"
        return f"{scheme}://{_auth(kwargs)}{hosts}"
    kwargs = client.connection_pool.connection_kwargs
    db = kwargs.get("db", 0)
    if kwargs.get("path"):
        return f"unix://{kwargs['path']}?db={db}"
    scheme = "rediss" if kwargs.get("ssl") else "redis"
    host = f"{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}"
    return f"{scheme}://{_auth(kwargs)}{host}/{db}"


def _auth(kwargs: dict[str, Any]) -> str:
    if not kwargs.get("password"):
        return ""
    return f"{quote(kwargs.get('username') or '', safe='')}:{quote(kwargs['password'], safe='')}@"


def server_name(redis_url: str | None = None) -> str:
    """The server a command uses, as an error names it (without its password)."""
    url = redis_url or os.environ.get("REDIS_URL")
    if not url:
        return EmbeddedServer(home_dir()).describe()
    parts = urlsplit(url)
    if parts.password:
        host = parts.netloc.rpartition("@")[2]
        parts = parts._replace(netloc=f"{parts.username or ''}:***@{host}")
    return urlunsplit(parts._replace(query=""))


def error_sentence(exc: RedisError | RedisClusterException) -> str:
    """One sentence for a person: what went wrong with Redis, and what would help."""
    said = str(exc).strip() or type(exc).__name__
    if isinstance(exc, EmbeddedServerError | RedisTooOld):
        return said
    if isinstance(exc, RedisTimeoutError):
        return f"Redis did not answer in time ({said})"
    if isinstance(exc, RedisConnectionError):
        return f"cannot reach Redis: {said}"
    if isinstance(exc, OutOfMemoryError) or said.startswith("OOM") or "-OOM " in said:
        return "Redis is out of memory (maxmemory reached) and refused the write"
    if isinstance(exc, ReadOnlyError) or "READONLY" in said:
        return "Redis is a read-only replica: point REDIS_URL at its primary"
    if isinstance(exc, AskError):  # MOVED too: a MovedError is an AskError
        return (
            "this Redis is a cluster node that does not hold the workspace's keys (slot "
            f"{exc.slot_id} is on {exc.host}:{exc.port}): give the cluster as "
            f"REDIS_URL=redis+cluster://{exc.host}:{exc.port}"
        )
    if isinstance(exc, ClusterDownError | TryAgainError | RedisClusterException):
        return f"the Redis cluster cannot serve this data now ({said})"
    return f"Redis refused: {said}"


def _check_version(client: RedisClient) -> None:
    if isinstance(client, RedisCluster):  # every primary: a workspace may live on any
        primaries = client.get_primaries()  # type: ignore[no-untyped-call]
        versions = [
            str(client.info("server", target_nodes=node).get("redis_version", "0"))
            for node in primaries
        ]
    else:
        versions = [str(client.info("server").get("redis_version", "0"))]
    for version in versions:
        parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
        if parts < _REDIS_MIN:
            raise RedisTooOld(f"Redis {version} is too old: Deliberate needs Redis 6.2 or later")
