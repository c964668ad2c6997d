"""A local Discord gateway (v10, JSON, no compression), in a thread of its own: what a bot's
connection to Discord goes through, here with every connection at once and sharded as Discord
shards (its gateway docs, "Sharding").

- HELLO; then IDENTIFY, with or without its ``shard`` array ``[shard_id, num_shards]``. A shard
  that is not two whole numbers with ``0 <= shard_id < num_shards`` is closed with 4010
  (Invalid shard); a connection that would hold more than ``max_guilds`` servers (Discord:
  2,500) with 4011 (Sharding required).
- READY with the connection's servers (each unavailable until its GUILD_CREATE) and its shard,
  then a GUILD_CREATE each; heartbeats acknowledged; a RESUME is answered with INVALID_SESSION
  (identify again), since nothing is kept for one.
- ``dispatch``: an event goes to every connection of its shard, as Discord routes it: a
  server's (a ``guild_id``, or the id of a GUILD_* event) to shard ``(guild_id >> 22) %
  num_shards``; one of no server (a direct message) to shard 0 alone. An unsharded
  connection gets them all.

    gateway = Gateway([guild_create(n) for n in range(4)]).start()
    env = {"DISCORD_GATEWAY_URL": gateway.url}
    wait_for(lambda: gateway.shards() == [(0, 2), (1, 2)])
    gateway.dispatch("MESSAGE_CREATE", data)   # the shards it went to: [(1, 2)]
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.servers.discord_api import BOT_ID, BOT_USER

__all__ = ["INVALID_SHARD", "MAX_GUILDS", "SHARDING_REQUIRED", "Gateway", "Shard"]

INVALID_SHARD, SHARDING_REQUIRED = 4010, 4011
MAX_GUILDS = 2500  # servers one connection may hold
HEARTBEAT_MS = 41250
GUILD_EVENTS = ("GUILD_CREATE", "GUILD_UPDATE", "GUILD_DELETE")  # their ``id`` is the server's

Shard = tuple[int, int] | None  # (shard_id, num_shards); None: an unsharded connection


@dataclass
class _Connection:
    shard: Shard
    queue: asyncio.Queue[tuple[str, dict[str, Any]]] = field(default_factory=asyncio.Queue)

    def receives(self, guild: str | None) -> bool:
        if self.shard is None:
            return True
        shard_id, count = self.shard
        if guild is None:
            return shard_id == 0
        return (int(guild) >> 22) % count == shard_id


def _shard_of(identify: dict[str, Any]) -> tuple[bool, Shard]:
    """(valid, the shard) of an IDENTIFY's data."""
    shard = identify.get("shard")
    if shard is None:
        return True, None
    if not (isinstance(shard, list) and len(shard) == 2):
        return False, None
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in shard):
        return False, None
    shard_id, count = shard
    return (count >= 1 and 0 <= shard_id < count), (shard_id, count)


class Gateway:
    """``guilds``: the GUILD_CREATE of every server the bot is in."""

    def __init__(self, guilds: Sequence[dict[str, Any]], *, max_guilds: int = MAX_GUILDS) -> None:
        self.guilds, self.max_guilds = list(guilds), max_guilds
        self.loop = asyncio.new_event_loop()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"ws://127.0.0.1:{self.sock.getsockname()[1]}/"
        self.closed: list[tuple[Any, int]] = []  # (IDENTIFY's shard as sent, the close code)
        self._connections: list[_Connection] = []
        self._lock = threading.Lock()
        self._sessions = itertools.count(1)
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None

    def start(self) -> Gateway:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._serve(), self.loop).result(30)
        return self

    def __enter__(self) -> Gateway:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def shards(self) -> list[Shard]:
        """The shards of the connections identified now, sorted (None: unsharded)."""
        with self._lock:
            shards = [c.shard for c in self._connections]
        return sorted(shards, key=lambda s: (-1, 0) if s is None else s)

    def dispatch(self, name: str, data: dict[str, Any]) -> list[Shard]:
        """Send ``name`` to the connections that get it (from any thread); the shards it
        went to."""
        guild = data.get("id") if name in GUILD_EVENTS else data.get("guild_id")
        with self._lock:
            receivers = [c for c in self._connections if c.receives(guild)]
        for connection in receivers:
            self.loop.call_soon_threadsafe(connection.queue.put_nowait, (name, data))
        return [c.shard for c in receivers]

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    # --- the connections -----------------------------------------------------------------

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_get("/", self._connection)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.SockSite(self._runner, self.sock).start()

    async def _connection(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": HEARTBEAT_MS}}))
        connection: _Connection | None = None
        writer: asyncio.Task[None] | None = None
        try:
            async for frame in ws:
                if frame.type is not WSMsgType.TEXT:
                    break
                payload = json.loads(frame.data)
                op = payload.get("op")
                if op == 1:  # a heartbeat
                    await ws.send_str(json.dumps({"op": 11}))
                elif op == 6:  # RESUME: no session is kept
                    await ws.send_str(json.dumps({"op": 9, "d": False}))
                elif op == 2 and connection is None:
                    connection = await self._identify(ws, payload.get("d") or {})
                    if connection is None:
                        break
                    writer = asyncio.create_task(_write(ws, connection))
        finally:
            if writer is not None:
                writer.cancel()
            if connection is not None:
                with self._lock:
                    self._connections.remove(connection)
        return ws

    async def _identify(
        self, ws: web.WebSocketResponse, identify: dict[str, Any]
    ) -> _Connection | None:
        """The connection, its READY and GUILD_CREATEs queued; None when closed instead."""
        valid, shard = _shard_of(identify)
        if not valid:
            self.closed.append((identify.get("shard"), INVALID_SHARD))
            await ws.close(code=INVALID_SHARD, message=b"Invalid shard")
            return None
        connection = _Connection(shard)
        guilds = [g for g in self.guilds if connection.receives(g["id"])]
        if len(guilds) > self.max_guilds:
            self.closed.append((identify.get("shard"), SHARDING_REQUIRED))
            await ws.close(code=SHARDING_REQUIRED, message=b"Sharding required")
            return None
        ready = {
            "v": 10,
            "user": BOT_USER,
            "guilds": [{"id": g["id"], "unavailable": True} for g in guilds],
            "session_id": f"session-{next(self._sessions)}",
            "resume_gateway_url": self.url,
            "application": {"id": BOT_ID, "flags": 1 << 19},
        }
        if shard is not None:
            ready["shard"] = list(shard)
        connection.queue.put_nowait(("READY", ready))
        for guild in guilds:
            connection.queue.put_nowait(("GUILD_CREATE", guild))
        with self._lock:
            self._connections.append(connection)
        return connection


async def _write(ws: web.WebSocketResponse, connection: _Connection) -> None:
    sequence = itertools.count(1)
    while True:
        name, data = await connection.queue.get()
        frame = {"op": 0, "t": name, "s": next(sequence), "d": data}
        await ws.send_str(json.dumps(frame))
