"""The Discord side of ``load.py``: ``deliberate run discord`` connected to a local gateway
(a websocket speaking Discord's gateway protocol, here: HELLO, IDENTIFY, READY with every
server, a GUILD_CREATE each, heartbeats acknowledged, then the dispatches) and to the tests'
local REST API (``tests/servers/discord_api``), so that the bot takes discord.py's whole path
as it does against Discord, and what it sends back is received and timed.

A visit to a server is four dispatches in its channel: a message that mentions the bot (a
turn, answered by a reply to it), chatter that does not (left alone), a second message
that mentions it (answered), and a click on "Use this" of that answer (an
INTERACTION_CREATE whose message is the answer as the REST API holds it: acknowledged by the
interaction's callback, answered by the edit of the clicked message).

One process only: the bot does not shard, so each replica connected to Discord would get
every server's events (Discord sends an unsharded connection all of them)."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import threading
import time
from datetime import UTC, datetime
from typing import Any

import discord
from aiohttp import WSMsgType, web
from load_slack import Arrivals, Tally

from tests.servers.discord_api import BOT_ID, BOT_USER, DiscordServer
from tests.servers.http import Request, Response

EVERYONE = discord.Permissions(
    view_channel=True, send_messages=True, read_message_history=True, use_application_commands=True
)
IDEAS = ("postgres for the event store", "a weekly demo on fridays", "rust for the parser")
STEPS = 4  # dispatches per visit
_snowflakes = itertools.count(1_500_000_000_000_000_000)


def guild_id(n: int) -> str:
    return str(1_300_000_000_000_000_000 + 100 * n)


def channel_of(guild: str) -> str:
    return str(int(guild) + 10)


class _Indexed(list[dict[str, Any]]):
    """The REST API's messages, each also found by id."""

    def __init__(self, by_id: dict[str, dict[str, Any]]) -> None:
        super().__init__()
        self.by_id = by_id

    def append(self, message: dict[str, Any]) -> None:
        super().append(message)
        self.by_id[message["id"]] = message


class BenchDiscord(DiscordServer):
    """The local REST API, keeping what the run waits for: the bot's messages by the message
    they reply to (or their channel), its edits by message, interaction callbacks by token;
    messages indexed by id, not scanned."""

    def __init__(self) -> None:
        super().__init__()
        self._httpd.socket.listen(1024)  # not socketserver's 5: see BenchSlack
        self._httpd.handle_error = _quiet  # type: ignore[method-assign]  # a bot gone mid-reply
        self.by_id: dict[str, dict[str, Any]] = {}
        self.messages = _Indexed(self.by_id)
        self.replies = Arrivals()  # (the message replied to, "") -> the bot's reply
        self.edits = Arrivals()  # (message id, "") -> its edits
        self.callbacks = Arrivals()  # (interaction token, "") -> its callback
        callback = "/api/v10/interactions/{id}/{token}/callback"
        self.route("POST", callback, self._timed_callback)

    def _record(self, request: Request) -> None:
        return  # kept by what the run waits for, not by request

    def _create_message(self, request: Request) -> Response:
        answered = super()._create_message(request)
        if answered.status == 200 and isinstance(answered.json, dict):
            message = answered.json
            replied = (message.get("message_reference") or {}).get("message_id")
            self.replies.add((str(replied or message["channel_id"]), ""), message)
        return answered

    def message(self, message_id: str) -> dict[str, Any]:
        with self.lock:
            return self.by_id[message_id]

    def edit(self, message_id: str, body: dict[str, Any]) -> Response:
        with self.lock:
            message = self.by_id.get(message_id)
            if message is None:
                return Response(404, {"message": "Unknown Message", "code": 10008})
            for field in ("content", "components"):
                if field in body:
                    message[field] = body[field] or ([] if field == "components" else "")
            message["edited_timestamp"] = datetime.now(UTC).isoformat()
        self.edits.add((message_id, ""), dict(body))
        return Response(200, message)

    def _same_nonce(self, channel_id: str, body: dict[str, Any]) -> dict[str, Any] | None:
        return None  # each message is sent once here

    def _timed_callback(self, request: Request) -> Response:
        answered = self.interactions._callback(request)
        if answered.status < 300:
            self.callbacks.add((request.params["token"], ""), {})
        return answered


def guild_create(n: int) -> dict[str, Any]:
    guild = guild_id(n)
    channel = {
        "id": channel_of(guild),
        "type": 0,
        "guild_id": guild,
        "name": "deliberation",
        "position": 0,
        "permission_overwrites": [],
        "nsfw": False,
        "parent_id": None,
        "rate_limit_per_user": 0,
    }
    everyone = {
        "id": guild,
        "name": "@everyone",
        "color": 0,
        "hoist": False,
        "position": 0,
        "permissions": str(EVERYONE.value),
        "managed": False,
        "mentionable": False,
        "flags": 0,
    }
    return {
        "id": guild,
        "name": f"Server {n}",
        "icon": None,
        "owner_id": person(n, 9),
        "roles": [everyone],
        "channels": [channel],
        "threads": [],
        "members": [],
        "emojis": [],
        "stickers": [],
        "features": [],
        "member_count": 3,
        "large": False,
        "unavailable": False,
        "joined_at": "2026-01-01T00:00:00+00:00",
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "mfa_level": 0,
        "premium_tier": 0,
        "preferred_locale": "en-US",
        "nsfw_level": 0,
    }


def person(n: int, who: int = 1) -> str:
    return str(1_400_000_000_000_000_000 + 10 * n + who)


def user(user_id: str) -> dict[str, Any]:
    return {"id": user_id, "username": f"u{user_id[-6:]}", "discriminator": "0", "avatar": None}


def member(user_id: str) -> dict[str, Any]:
    return {
        "roles": [],
        "joined_at": "2026-01-01T00:00:00+00:00",
        "deaf": False,
        "mute": False,
        "flags": 0,
        "nick": None,
        "avatar": None,
        "premium_since": None,
        "pending": False,
        "communication_disabled_until": None,
    }


def message_create(n: int, text: str, *, mention: bool = True) -> dict[str, Any]:
    guild, author = guild_id(n), person(n)
    return {
        "id": str(next(_snowflakes)),
        "channel_id": channel_of(guild),
        "guild_id": guild,
        "author": user(author),
        "member": member(author),
        "content": f"<@{BOT_ID}> {text}" if mention else text,
        "timestamp": datetime.now(UTC).isoformat(),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [BOT_USER] if mention else [],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "components": [],
        "pinned": False,
        "type": 0,
        "flags": 0,
    }


def click(n: int, message: dict[str, Any], custom_id: str) -> dict[str, Any]:
    guild, clicker = guild_id(n), person(n)
    interaction = str(next(_snowflakes))
    channel = guild_create(n)["channels"][0]
    return {
        "id": interaction,
        "application_id": BOT_ID,
        "type": 3,
        "token": f"interaction-token-{interaction}",
        "version": 1,
        "guild_id": guild,
        "guild_locale": "en-US",
        "channel_id": channel["id"],
        "channel": channel,
        "context": 0,
        "locale": "en-US",
        "entitlements": [],
        "attachment_size_limit": 10 * 1024 * 1024,
        "app_permissions": str(discord.Permissions.text().value),
        "member": member(clicker) | {"user": user(clicker), "permissions": str(EVERYONE.value)},
        "authorizing_integration_owners": {"0": guild},
        "message": message,
        "data": {"custom_id": custom_id, "component_type": 2},
    }


class Gateway:
    """A local Discord gateway for one connection at a time, in a thread of its own;
    ``dispatch`` from any thread."""

    def __init__(self, guilds: int) -> None:
        self.guilds = guilds
        self.loop = asyncio.new_event_loop()
        self.queue: asyncio.Queue[tuple[str, dict[str, Any]]] | None = None
        self.ready = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"ws://127.0.0.1:{self.sock.getsockname()[1]}/"
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None

    def start(self) -> Gateway:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._serve(), self.loop).result(30)
        return self

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_get("/", self._connection)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.SockSite(self._runner, self.sock).start()

    async def _connection(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        self.queue = asyncio.Queue()
        sequence = itertools.count(1)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 41250}}))

        async def write() -> None:
            assert self.queue is not None
            while True:
                name, data = await self.queue.get()
                frame = {"op": 0, "t": name, "s": next(sequence), "d": data}
                await ws.send_str(json.dumps(frame))

        writer = asyncio.create_task(write())
        try:
            async for frame in ws:
                if frame.type is not WSMsgType.TEXT:
                    break
                op = json.loads(frame.data).get("op")
                if op == 1:  # a heartbeat
                    await ws.send_str(json.dumps({"op": 11}))
                elif op == 2:  # IDENTIFY: who the bot is, and every server it is in
                    await self._identified()
        finally:
            writer.cancel()
        return ws

    async def _identified(self) -> None:
        assert self.queue is not None
        ready = {
            "v": 10,
            "user": BOT_USER,
            "guilds": [{"id": guild_id(n), "unavailable": True} for n in range(self.guilds)],
            "session_id": "load-session",
            "resume_gateway_url": self.url,
            "application": {"id": BOT_ID, "flags": 1 << 19},
        }
        await self.queue.put(("READY", ready))
        for n in range(self.guilds):
            await self.queue.put(("GUILD_CREATE", guild_create(n)))
        self.ready.set()

    def dispatch(self, name: str, data: dict[str, Any]) -> None:
        queue = self.queue
        assert queue is not None, "the bot is not connected"
        self.loop.call_soon_threadsafe(queue.put_nowait, (name, data))

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


class DiscordTraffic:
    """``senders`` threads visiting ``guilds`` servers in turn until ``events`` dispatches
    have been sent (at least one visit each)."""

    def __init__(
        self,
        api: BenchDiscord,
        gateway: Gateway,
        guilds: int,
        events: int,
        *,
        answer_timeout: float = 30.0,
    ) -> None:
        self.api, self.gateway, self.guilds = api, gateway, guilds
        self.visits = max(1, events // STEPS)
        self.answer_timeout = answer_timeout
        self.tally = Tally()
        self.started = 0
        self.dispatched = 0
        self._visit = itertools.count()
        self._lock = threading.Lock()

    def dispatch(self, name: str, data: dict[str, Any]) -> None:
        with self._lock:
            self.dispatched += 1
        self.gateway.dispatch(name, data)

    def reached(self) -> int:
        return min(self.started, self.guilds)

    def run(self, senders: int) -> float:
        threads = [threading.Thread(target=self._send, daemon=True) for _ in range(senders)]
        start = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return time.monotonic() - start

    def _send(self) -> None:
        while (n := next(self._visit)) < self.visits:
            self.started = max(self.started, n + 1)
            self.visit(n)

    def _turn(self, n: int, text: str) -> dict[str, Any] | None:
        said = message_create(n % self.guilds, text)
        sent = time.monotonic()
        self.dispatch("MESSAGE_CREATE", said)
        return self._answered("turn", self.api.replies, said["id"], sent)

    def _answered(
        self, kind: str, arrivals: Arrivals, key: str, sent: float
    ) -> dict[str, Any] | None:
        got = arrivals.wait((key, ""), 1, self.answer_timeout)
        arrivals.forget((key, ""))
        if got is None:
            self.tally.answers.append((kind, None))
            self.tally.failures[f"{kind}: no answer in {self.answer_timeout}s"] += 1
            return None
        self.tally.answers.append((kind, got[0] - sent))
        return got[1]

    def visit(self, n: int) -> None:
        guild = n % self.guilds
        first = self._turn(n, f"what if we used {IDEAS[n % len(IDEAS)]}")
        chatter = message_create(guild, "lunch?", mention=False)
        self.dispatch("MESSAGE_CREATE", chatter)
        second = self._turn(n, "make it smaller, team only") if first else None
        answer = second or first
        if answer is None:
            return
        ids = [b["custom_id"] for row in answer.get("components") or [] for b in row["components"]]
        confirm = next((c for c in ids if c.split(":")[1] == "ConfirmCurrent"), None)
        if confirm is None:
            self.tally.failures["click: the answer had no Use this button"] += 1
            return
        current = self.api.message(answer["id"])
        data = click(guild, current, confirm)
        self.api.interactions.started(data["id"], data["token"], data["channel_id"], current["id"])
        sent = time.monotonic()
        self.dispatch("INTERACTION_CREATE", data)
        acked = self.api.callbacks.wait((data["token"], ""), 1, self.answer_timeout)
        if acked is None:
            self.tally.failures["click: never acknowledged"] += 1
        else:
            self.tally.acks.append((0, "click", 200, acked[0] - sent))
        self._answered("click", self.api.edits, current["id"], sent)


def _quiet(request: object, client_address: object) -> None:
    """socketserver prints a traceback for each connection a client dropped (the bot
    stopping at the end of a run): nothing the run measures."""
