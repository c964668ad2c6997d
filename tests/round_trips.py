"""Round trips counted on a real client: a copy of the suite's client (one server, or the
cluster on a cluster run) whose connections count each write they send (one per command,
one per pipeline: a round trip), made by the counting thread while counting is on; and what
those writes said (``mentions``: how often a key name was sent, e.g. each entry read). A
write sent before any reply was read since the one before it is no round trip of its own:
it goes while the first is on its way, and their replies come back together (a pipeline
sent in two writes, ``Wire.call_all``'s ``more``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from redis import ConnectionPool, Redis
from redis.cluster import RedisCluster
from redis.connection import AbstractConnection, Connection

from core.redis.client import RedisClient

__all__ = ["Trips", "counting_copy"]


class Trips:
    """How many round trips this thread made while ``counting()``."""

    def __init__(self) -> None:
        self.count = 0
        self.on = False
        self.thread = threading.get_ident()
        self.said: list[bytes] = []
        self.waiting = False  # a write sent, and no reply read since

    @contextmanager
    def counting(self) -> Iterator[Trips]:
        self.count, self.on, self.said, self.waiting = 0, True, [], False
        try:
            yield self
        finally:
            self.on = False

    def sent(self, packed: bytes | str | list[bytes] | tuple[bytes, ...] = b"") -> None:
        # (the metrics' flushing thread and the like use the client too: not counted)
        if self.on and threading.get_ident() == self.thread:
            self.count += not self.waiting
            self.waiting = True
            chunks = [packed] if isinstance(packed, bytes | str) else packed
            self.said.extend(c.encode() if isinstance(c, str) else bytes(c) for c in chunks)

    def heard(self) -> None:
        """A reply read (the next write is a round trip of its own)."""
        if threading.get_ident() == self.thread:
            self.waiting = False

    def mentions(self, name: str) -> int:
        """How many times ``name`` was sent while counting (a key of each command naming it)."""
        return b"".join(self.said).count(name.encode())


def counting_copy(client: RedisClient) -> tuple[RedisClient, Trips]:
    """A client of the same server or cluster as ``client``, and what it counts."""
    trips = Trips()

    def counted_class(plain: type[AbstractConnection]) -> type[AbstractConnection]:
        def send_packed_command(self: Any, *args: Any, **kwargs: Any) -> None:
            trips.sent(args[0] if args else b"")
            plain.send_packed_command(self, *args, **kwargs)  # type: ignore[no-untyped-call]

        def read_response(self: Any, *args: Any, **kwargs: Any) -> Any:
            trips.heard()
            return plain.read_response(self, *args, **kwargs)

        members = {"send_packed_command": send_packed_command, "read_response": read_response}
        return type(f"Counting{plain.__name__}", (plain,), members)

    if isinstance(client, RedisCluster):
        # redis-py leaves the cluster client's helpers unannotated, hence the ignores
        kwargs = dict(client.get_connection_kwargs())  # type: ignore[no-untyped-call]
        for name in ("redis_connect_func", "host", "port"):  # the cluster client sets its own
            kwargs.pop(name, None)
        kwargs["connection_class"] = counted_class(kwargs.get("connection_class", Connection))
        node = client.get_nodes()[0]  # type: ignore[no-untyped-call]
        # (built from a URL, the cluster client hands the connection class to its nodes)
        return RedisCluster(url=f"redis://{node.host}:{node.port}", **kwargs), trips
    pool = client.connection_pool
    counting = counted_class(pool.connection_class)
    return Redis(
        connection_pool=ConnectionPool(connection_class=counting, **pool.connection_kwargs)
    ), trips
