"""A port that refuses connections for as long as a test holds it: a socket bound to it and
never listening. Linux answers a connection there with a reset (connection refused), and no
other process can bind the port meanwhile, which a port bound and released at once (then
reused by another xdist worker's server) does not promise."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["refusing_port", "refusing_ports"]


@contextmanager
def refusing_ports(count: int) -> Iterator[list[int]]:
    """``count`` distinct ports of 127.0.0.1, each refusing connections until the block ends."""
    held = []
    try:
        for _ in range(count):
            bound = socket.socket()
            held.append(bound)
            bound.bind(("127.0.0.1", 0))  # no listen(): a connection is refused
        yield [int(bound.getsockname()[1]) for bound in held]
    finally:
        for bound in held:
            bound.close()


@contextmanager
def refusing_port() -> Iterator[int]:
    with refusing_ports(1) as [port]:
        yield port
