"""The Discord side of ``load.py``: ``deliberate run discord`` connected to the tests' local
gateway (``tests/servers/discord_gateway``: HELLO, IDENTIFY, READY with the servers of the
connection's shard, a GUILD_CREATE each, heartbeats acknowledged, then the dispatches, each
to the connection of its server's shard) and to their local REST API
(``tests/servers/discord_api``), so that the bot takes discord.py's whole path as it does
against Discord, and what it sends back is received and timed. The servers are the numbered
ones of ``tests/servers/discord_guilds``, spread over the shards as real ones are.

A visit to a server is four dispatches in its channel: a message that mentions the bot (a
turn, answered by a reply to it), chatter that does not (left alone), a second message
that mentions it (answered), and a click on "Use this" of that answer (an
INTERACTION_CREATE whose message is the answer as the REST API holds it: acknowledged by the
interaction's callback, answered by the edit of the clicked message).

One process, unsharded, or N replicas running a shard each (``--shard i/N``): each gets its
shard's servers alone, and the dispatches are counted by the shard they went to."""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from load_slack import Arrivals, Tally

from tests.servers.discord_api import DiscordServer
from tests.servers.discord_gateway import Gateway
from tests.servers.discord_guilds import click, message_create
from tests.servers.http import Request, Response

IDEAS = ("postgres for the event store", "a weekly demo on fridays", "rust for the parser")
STEPS = 4  # dispatches per visit


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
        self.by_shard: Counter[int] = Counter()  # dispatches by the shard they went to
        self._visit = itertools.count()
        self._lock = threading.Lock()

    def dispatch(self, name: str, data: dict[str, Any]) -> None:
        shards = self.gateway.dispatch(name, data)
        if not shards:
            self.tally.failures[f"{name}: no connection of its shard"] += 1
        with self._lock:
            self.dispatched += 1
            for shard in shards:
                self.by_shard[shard[0] if shard else 0] += 1

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
