"""Fixtures of the runtime's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from redis import Redis

from tests.servers.tcp_proxy import RedisProxy


@pytest.fixture
def proxy(server_redis: Redis) -> Iterator[RedisProxy]:
    """A proxy in front of the suite's one server, which can hold its replies and cut the
    link (``RedisProxy``)."""
    with RedisProxy(server_redis) as proxy:
        yield proxy
