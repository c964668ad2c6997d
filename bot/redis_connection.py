"""Where canonical state lives: the Redis at ``REDIS_URL``, or the embedded server of
``DELIBERATE_HOME`` (one detached redis-server per data directory, see
``bot.embedded_redis``); and what to tell a person when Redis fails."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from redis import ConnectionPool, Redis, UnixDomainSocketConnection
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import (
    AskError,
    ClusterDownError,
    OutOfMemoryError,
    ReadOnlyError,
    RedisError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from bot.embedded_redis import DEFAULT_HOME, EmbeddedServer, EmbeddedServerError, home_dir

__all__ = [
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


class RedisTooOld(RedisError):
    """The server answers, but is older than the commit script needs."""


def connect(redis_url: str | None = None) -> Redis:
    """A client with ``decode_responses`` on; checks the server is at least Redis 6.2."""
    url = redis_url or os.environ.get("REDIS_URL")
    client: Redis = (
        Redis.from_url(url, decode_responses=True) if url else embedded_client(home_dir())
    )
    _check_version(client)
    return client


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


def connection_url(client: Redis) -> str:
    """A URL another process can connect with (for the embedded server: its unix socket)."""
    kwargs: dict[str, Any] = client.connection_pool.connection_kwargs
    db = kwargs.get("db", 0)
    if kwargs.get("path"):
        return f"unix://{kwargs['path']}?db={db}"
    auth = ""
    if kwargs.get("password"):
        auth = f"{kwargs.get('username') or ''}:{kwargs['password']}@"
    scheme = "rediss" if kwargs.get("ssl") else "redis"
    return f"{scheme}://{auth}{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}/{db}"


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


def error_sentence(exc: RedisError) -> str:
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
            f"{exc.slot_id} is on {exc.host}:{exc.port}): point REDIS_URL at that node"
        )
    if isinstance(exc, ClusterDownError | TryAgainError):
        return f"the Redis cluster cannot serve this data now ({said})"
    return f"Redis refused: {said}"


def _check_version(client: Redis) -> None:
    version = str(client.info("server").get("redis_version", "0"))
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    if parts < _REDIS_MIN:
        raise RedisTooOld(f"Redis {version} is too old: Deliberate needs Redis 6.2 or later")
