"""Where canonical state lives: the Redis at ``REDIS_URL`` (one server, or a Redis Cluster
given as ``redis+cluster://host:port[,host:port…]``), or the embedded server of
``DELIBERATE_HOME`` (one detached redis-server per data directory, see
``bot.redis.embedded``); and what to tell a person when Redis fails."""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

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

from bot.redis.embedded import DEFAULT_HOME, EmbeddedServer, EmbeddedServerError, home_dir
from core.redis.client import RedisClient

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
    scheme, _, rest = url.partition("://")
    # the credentials end at the last "@" (a password may hold "/", "?" or "#" unquoted)
    credentials, at, hosts = rest.rpartition("@")
    hosts, _, query = hosts.partition("?")
    hosts, _, database = hosts.partition("/")
    nodes = [_node(url, each) for each in hosts.split(",") if each.strip()]
    if not nodes:
        raise ValueError(f"{server_name(url)}: a cluster URL names at least one host:port")
    if database.strip("/") not in ("", "0"):
        raise ValueError(f"{server_name(url)}: a Redis Cluster has one database, 0")
    # the options redis-py reads from a URL (TLS, timeouts), read from a node's URL
    options = parse_url(f"{CLUSTER_SCHEMES[scheme]}://node/0?{query}")  # type: ignore[no-untyped-call]
    for each in ("host", "port", "path", "db", "decode_responses"):
        options.pop(each, None)
    if options.pop("connection_class", None) is not None:  # rediss: TLS on every node
        options["ssl"] = True
    if at:
        username, _, password = credentials.partition(":")
        options.update(username=unquote(username) or None, password=unquote(password) or None)
    return RedisCluster(startup_nodes=nodes, decode_responses=True, **options)


def _node(url: str, text: str) -> ClusterNode:
    host, _, port = text.strip().rpartition(":")
    if not host or not port.isdigit():
        # not echoed: a password with an unquoted "@" would show here
        raise ValueError(f"{server_name(url)}: every node must be given as host:port")
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
    """The server a command uses, as an error names it: its password shown as ``***``
    (everything up to the last "@", however the password is spelled), its query left out."""
    url = redis_url or os.environ.get("REDIS_URL")
    if not url:
        return EmbeddedServer(home_dir()).describe()
    scheme, sep, rest = url.partition("://")
    credentials, at, where = rest.rpartition("@")
    if at and ":" in credentials:
        credentials = f"{credentials.partition(':')[0]}:***"
    where = where.partition("?")[0]
    return f"{scheme}{sep}{credentials}{at}{where}"


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
    if isinstance(client, RedisCluster):
        # every primary that answers (a workspace may live on any; one failing over is
        # checked once it is back, by the next command)
        versions = []
        for node in client.get_primaries():  # type: ignore[no-untyped-call]
            with contextlib.suppress(RedisConnectionError, RedisTimeoutError):
                info = client.info("server", target_nodes=node)
                versions.append(str(info.get("redis_version", "0")))
        if not versions:
            raise RedisClusterException("no primary of the cluster answers")
    else:
        versions = [str(client.info("server").get("redis_version", "0"))]
    for version in versions:
        parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
        if parts < _REDIS_MIN:
            raise RedisTooOld(f"Redis {version} is too old: Deliberate needs Redis 6.2 or later")
