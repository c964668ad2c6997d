"""Opening a server's port: an address that cannot be listened on is one line naming it
(``cannot listen on 127.0.0.1:8080: the port is in use``), exit 2, never a traceback.
``deliberate web`` and ``deliberate run slack`` in HTTP mode open theirs through ``bound``."""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable
from typing import TypeVar

__all__ = ["CannotListen", "address", "bound"]

T = TypeVar("T")

_WHY = {
    errno.EADDRINUSE: "the port is in use",
    errno.EACCES: "permission denied (a port below 1024 needs privileges)",
    errno.EADDRNOTAVAIL: "the address is not one of this machine's",
}


class CannotListen(ValueError):
    """A usage error (``bot.main`` prints it after ``deliberate:`` and exits 2)."""


def address(host: str, port: int) -> str:
    """``host:port``, an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def bound(open_server: Callable[[], T], host: str, port: int) -> T:
    """``open_server()``, which binds ``host:port``; an address it cannot bind raises
    ``CannotListen`` naming the address and why."""
    try:
        return open_server()
    except OSError as exc:
        raise CannotListen(f"cannot listen on {address(host, port)}: {_reason(exc)}") from None


def _reason(exc: OSError) -> str:
    if isinstance(exc, socket.gaierror):
        return "the address cannot be resolved"
    if exc.errno in _WHY:
        return _WHY[exc.errno]
    return (exc.strerror or str(exc)).lower()
