"""Scripts sent on a connection of one Redis server without redis-py's per-call layers.

``Redis.execute_command`` costs about 170,000 instructions a round trip here
(``bench/instructions.py``), most of them around the command rather than in it: taking a
connection from the pool and giving it back (a lock, a poll of the socket, four
observability counters each way), an operation timer and its recorder, the argument
encoding's generator, a closure per call. A ``Wire`` keeps the connections it used between
calls (taken from the pool, handed back on any error) and sends a command packed in one call
to hiredis, inside the connection's own ``Retry``, as redis-py does. What stays: the
connection's retry policy and its reconnection, ``NOSCRIPT`` (raised as ``NoScriptError``,
as by redis-py), any error reply raised as redis-py raises it, decoded replies as the
client's pool decodes them.

Only for a client whose commands nothing else changes: a ``Redis`` whose
``execute_command`` is redis-py's own (a subclass that wraps it gets what it asks for), on a
plain ``ConnectionPool`` with no client-side cache (a blocking pool caps its connections,
and a wire holding some would starve it), not a single-connection client. A cluster client
routes each call by its slot map and follows MOVED and failovers: ``wire_of`` answers None
for it, and its scripts go through redis-py's ``RedisCluster``."""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from typing import Any

from hiredis import pack_command
from redis import ConnectionPool, Redis
from redis.connection import Connection
from redis.exceptions import ConnectionError, DataError, ResponseError, TimeoutError

__all__ = ["MAX_IDLE", "POOL_SHARE", "InFlight", "Wire", "packed", "wire_of"]

MAX_IDLE = 16  # connections a wire keeps between calls; past them, handed back to the pool
# and never more than an eighth of the pool's cap (redis-py's default is 100), so that the
# client's other commands still find a connection: with ``max_connections=1`` none is kept
POOL_SHARE = 8

_wires: weakref.WeakKeyDictionary[ConnectionPool, Wire] = weakref.WeakKeyDictionary()


def wire_of(client: Any) -> Wire | None:
    """The wire of ``client``'s pool (one per pool, shared by every script on it), or None
    when its commands must go through redis-py (see the module's notes)."""
    if type(client).execute_command is not Redis.execute_command:
        return None
    if getattr(client, "connection", None) is not None:  # a single-connection client
        return None
    pool = getattr(client, "connection_pool", None)
    if type(pool) is not ConnectionPool or pool.cache is not None:
        return None
    wire = _wires.get(pool)
    if wire is None:
        wire = _wires.setdefault(pool, Wire(pool))
    return wire


class Wire:
    """The connections of one pool that commands are sent on directly. Thread-safe: a
    connection is taken from the idle list (or the pool) by one call at a time."""

    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = weakref.ref(pool)  # (the pool's wire must not keep the pool alive)
        self._idle: list[Connection] = []
        self._keep = min(MAX_IDLE, pool.max_connections // POOL_SHARE)

    def call(self, command: tuple[Any, ...]) -> Any:
        """``command``'s reply, sent as redis-py would send it (the same bytes)."""
        message = [packed(command)]
        return self._exchanged(lambda conn: _round_trip(conn, message))

    def call_all(
        self,
        commands: list[tuple[Any, ...]],
        more: Callable[[], list[tuple[Any, ...]]] | None = None,
    ) -> list[Any]:
        """The replies of ``commands``, sent in one write on one connection (a pipeline, no
        transaction), in order; an error reply stands in its place, as in redis-py's
        ``execute(raise_on_error=False)``. Made again whole when cut off, as ``call`` is:
        only for commands harmless to run twice.

        ``more``: the commands that follow them, asked for once the first are sent, and
        sent in a second write on the same connection before any reply is read (the server
        runs them in order, after the first): what the caller makes of the first while they
        are on their way costs no wait of its own. Asked once, also when cut off and made
        again. When it raises, the replies of the first are read (the connection serves on)
        and its error is raised: the first ran."""
        first = b"".join(packed(command) for command in commands)
        if more is None:
            replies: list[Any] = self._exchanged(
                lambda conn: _round_trips(conn, [first], len(commands))
            )
            return replies
        later: list[tuple[bytes, int]] = []  # (asked and packed once: sent again as it was)

        def exchange(conn: Connection) -> list[Any]:
            conn.send_packed_command([first])  # type: ignore[no-untyped-call]
            if not later:
                try:
                    following = more()
                    later.append((b"".join(packed(c) for c in following), len(following)))
                except BaseException:
                    _read(conn, len(commands))
                    raise
            message, count = later[0]
            if count:
                conn.send_packed_command([message])  # type: ignore[no-untyped-call]
            return _read(conn, len(commands) + count)

        replies = self._exchanged(exchange)
        return replies

    def _exchanged(self, exchange: Callable[[Connection], Any]) -> Any:
        """``exchange`` made on a connection of the wire, inside the connection's own
        ``Retry``; the connection kept for the next call, or handed back on any error."""
        pool, conn = self._taken()
        try:
            answer = conn.retry.call_with_retry(
                lambda: exchange(conn),
                lambda _error: conn.disconnect(),  # type: ignore[no-untyped-call]
            )
        except ResponseError:  # (an error reply, read whole: the connection serves on)
            pool.release(conn)
            raise
        except BaseException:
            # (a reply may be left unread on it: redis-py's pool does not always look before
            # it hands a connection out again)
            conn.disconnect()  # type: ignore[no-untyped-call]
            pool.release(conn)
            raise
        self._given_back(pool, conn)
        return answer

    @property
    def holds(self) -> bool:
        """Whether a connection may be held while its reply waits (``send``): not on a pool
        capped so low that the wire keeps none between calls (under ``POOL_SHARE``), whose
        other commands would find none."""
        return self._keep > 0

    def send(self, command: tuple[Any, ...]) -> InFlight:
        """``command`` sent (once: a send cut off raises), its reply read later
        (``InFlight.reply``) while the caller goes on; its connection is the caller's till
        then."""
        message = [packed(command)]
        pool, conn = self._taken()
        try:
            conn.send_packed_command(message)  # type: ignore[no-untyped-call]
        except BaseException:
            conn.disconnect()  # type: ignore[no-untyped-call]
            pool.release(conn)
            raise
        return InFlight(self, pool, conn)

    def _taken(self) -> tuple[ConnectionPool, Connection]:
        pool = self._pool()
        if pool is None:
            raise DataError("the connection pool of this wire was closed and collected")
        try:
            conn = self._idle.pop()
        except IndexError:
            conn = pool.get_connection()
        else:
            _check(conn)
        return pool, conn

    def _given_back(self, pool: ConnectionPool, conn: Connection) -> None:
        """``conn``, its reply read, kept for the next call (or handed back to the pool)."""
        if len(self._idle) >= self._keep or conn.should_reconnect():  # type: ignore[no-untyped-call]
            pool.release(conn)
        else:
            self._idle.append(conn)

    def forget(self) -> None:
        """Drop the connections kept (a forked child must not share its parent's sockets:
        the pool makes new ones for it, as it does for its own)."""
        self._idle = []


class InFlight:
    """A command sent on a wire (``Wire.send``) whose reply is not read yet: read it once
    (``reply``). Its connection is the caller's till then, never handed out with a reply
    nobody read (one cut off is closed)."""

    def __init__(self, wire: Wire, pool: ConnectionPool, conn: Connection) -> None:
        self._wire = wire
        self._pool = pool
        self._conn: Connection | None = conn

    def reply(self) -> Any:
        """The reply (an error reply raised as redis-py raises it; a connection cut off
        raises, and whether the command ran is not known)."""
        conn, self._conn = self._conn, None
        if conn is None:
            raise DataError("this reply was read already")
        try:
            reply = conn.read_response()
        except ResponseError:  # (read whole: the connection serves on)
            self._wire._given_back(self._pool, conn)
            raise
        except BaseException:
            conn.disconnect()  # type: ignore[no-untyped-call]
            self._pool.release(conn)
            raise
        self._wire._given_back(self._pool, conn)
        return reply


def packed(command: tuple[Any, ...]) -> bytes:
    """``command`` in RESP, as redis-py packs it: str as UTF-8, int and float as their
    decimal text, bytes as they are; anything else (None, a bool) is a ``DataError``."""
    try:
        return bytes(pack_command(command))
    except TypeError as error:
        raise DataError(str(error)) from error


def _check(conn: Connection) -> None:
    """What the pool checks of a connection it hands out: one the server closed while it
    sat idle (a restart, a ``CLIENT KILL``, a timeout), or one with a reply nobody read, is
    disconnected, and the send connects it again (no retry spent)."""
    try:
        if conn.can_read():
            conn.disconnect()  # type: ignore[no-untyped-call]
    except (ConnectionError, TimeoutError, OSError):
        conn.disconnect()  # type: ignore[no-untyped-call]


def _round_trip(conn: Connection, packed: list[bytes]) -> Any:
    conn.send_packed_command(packed)  # type: ignore[no-untyped-call]
    return conn.read_response()


def _round_trips(conn: Connection, packed: list[bytes], count: int) -> list[Any]:
    conn.send_packed_command(packed)  # type: ignore[no-untyped-call]
    return _read(conn, count)


def _read(conn: Connection, count: int) -> list[Any]:
    replies: list[Any] = []
    for _ in range(count):
        try:
            replies.append(conn.read_response())
        except ResponseError as error:  # (read whole: the next reply follows)
            replies.append(error)
    return replies


def _forget_all() -> None:
    for wire in list(_wires.values()):
        wire.forget()


os.register_at_fork(after_in_child=_forget_all)
