"""A local Discord REST API (v10) for the bot's token: who the bot is (``/users/@me``,
``/oauth2/applications/@me``), messages (create with ``nonce``/``enforce_nonce``, edit),
typing, app command registration, and people (server members, direct messages:
``discord_people``). Discord's ``{"message",
"code"}`` errors, its documented message limits (2000 characters, 5 rows of 5 buttons,
custom_ids of at most 100 characters, labels of at most 80), and scriptable 429s carrying
``retry_after``. Interactions are answered by ``discord_interactions``.

    with DiscordServer() as discord:
        env = discord.env()    # DISCORD_TOKEN, DISCORD_API_URL
        discord.rate_limit_next(retry_after=0.2)
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from tests.servers.discord_interactions import InteractionRoutes
from tests.servers.discord_people import People
from tests.servers.http import HttpServer, Request, Response

__all__ = ["API", "BOT_ID", "MESSAGES", "DiscordServer", "discord_error"]

API = "/api/v10"
MESSAGES = API + "/channels/{channel_id}/messages"
BOT_ID = "1100000000000000001"  # the bot user's id, and its application's
BOT_USER = {
    "id": BOT_ID,
    "username": "deliberate",
    "discriminator": "0",
    "global_name": "Deliberate",
    "avatar": None,
    "bot": True,
}
MAX_CONTENT, MAX_ROWS, PER_ROW, MAX_CUSTOM_ID, MAX_LABEL = 2000, 5, 5, 100, 80


def discord_error(
    status: int, message: str, code: int = 0, headers: dict[str, str] | None = None
) -> Response:
    return Response(status, {"message": message, "code": code}, headers or {})


def invalid_form(problem: str) -> Response:
    return Response(400, {"message": "Invalid Form Body", "code": 50035, "errors": problem})


class DiscordServer(HttpServer):
    """``channels``: the channel ids that exist; None accepts any."""

    def __init__(
        self, *, token: str = "test-discord-bot-token", channels: set[str] | None = None
    ) -> None:
        super().__init__()
        self.token, self.channels = token, channels
        self.messages: list[dict[str, Any]] = []  # created, in order (edits update them)
        self.commands: dict[str, list[dict[str, Any]]] = {}  # "global" or a guild id
        self._ids = itertools.count(1_200_000_000_000_000_000)
        self.lock = threading.RLock()
        self.route("POST", MESSAGES, self._authed(self._create_message))
        self.route("PATCH", MESSAGES + "/{message_id}", self._authed(self._edit_message))
        self.route("POST", API + "/channels/{channel_id}/typing", self._authed(_no_content))
        self.route("GET", API + "/users/@me", self._authed(lambda r: Response(200, BOT_USER)))
        self.route("GET", API + "/oauth2/applications/@me", self._authed(_application))
        commands = API + "/applications/{application_id}/commands"
        guild_commands = API + "/applications/{application_id}/guilds/{guild_id}/commands"
        self.route("PUT", commands, self._authed(self._put_commands))
        self.route("PUT", guild_commands, self._authed(self._put_commands))
        self.interactions = InteractionRoutes(self)
        self.people = People(self)
        members = API + "/guilds/{guild_id}/members/{user_id}"
        self.route("GET", members, self._authed(self.people.member))
        self.route("POST", API + "/users/@me/channels", self._authed(self.people.open))

    @property
    def api_url(self) -> str:
        return self.url + API

    def env(self) -> dict[str, str]:
        return {"DISCORD_TOKEN": self.token, "DISCORD_API_URL": self.api_url}

    def rate_limit_next(self, retry_after: float = 0.2, times: int = 1) -> None:
        body = {
            "message": "You are being rate limited.",
            "retry_after": retry_after,
            "global": False,
        }
        headers = {"Retry-After": str(retry_after), "X-RateLimit-Scope": "user"}
        self.script("POST", MESSAGES, *([Response(429, body, headers)] * times))

    def check_message(self, body: dict[str, Any]) -> Response | None:
        return message_problem(body)

    def ephemerals(self) -> list[dict[str, Any]]:
        with self.lock:
            return [m for m in self.messages if m["flags"] & 64]

    def public(self) -> list[dict[str, Any]]:
        with self.lock:
            return [m for m in self.messages if not m["flags"] & 64]

    def message(self, message_id: str) -> dict[str, Any]:
        with self.lock:
            return next(m for m in self.messages if m["id"] == message_id)

    # --- routes --------------------------------------------------------------------------

    def _authed(self, handler: Callable[[Request], Response]) -> Callable[[Request], Response]:
        def answer(request: Request) -> Response:
            if request.header("Authorization") != f"Bot {self.token}":
                return discord_error(401, "401: Unauthorized")
            return handler(request)

        return answer

    def direct(self, user_id: str) -> list[dict[str, Any]]:
        """The messages posted in ``user_id``'s direct message channel."""
        channel = self.people.channel_of(user_id)
        with self.lock:
            return [m for m in self.messages if m["channel_id"] == channel]

    def _create_message(self, request: Request) -> Response:
        channel_id = request.params["channel_id"]
        dm = self.people.holds(channel_id)
        if self.channels is not None and channel_id not in self.channels and not dm:
            return discord_error(404, "Unknown Channel", 10003)
        refused = self.people.refuses(channel_id)
        if refused is not None:
            return refused
        body = request.json if isinstance(request.json, dict) else {}
        problem = message_problem(body)
        if problem is not None:
            return problem
        with self.lock:
            earlier = self._same_nonce(channel_id, body)
            if earlier is not None:
                return Response(200, earlier)
            message = self.new_message(channel_id, body)
            self.messages.append(message)
        return Response(200, message)

    def _edit_message(self, request: Request) -> Response:
        body = request.json if isinstance(request.json, dict) else {}
        return self.edit(request.params["message_id"], body)

    def edit(self, message_id: str, body: dict[str, Any]) -> Response:
        problem = message_problem(body, editing=True)
        if problem is not None:
            return problem
        with self.lock:
            message = next((m for m in self.messages if m["id"] == message_id), None)
            if message is None:
                return discord_error(404, "Unknown Message", 10008)
            for field in ("content", "components"):
                if field in body:
                    message[field] = body[field] or ([] if field == "components" else "")
            message["edited_timestamp"] = datetime.now(UTC).isoformat()
            message.setdefault("edits", 0)
            message["edits"] += 1
            return Response(200, {k: v for k, v in message.items() if k != "edits"})

    def _put_commands(self, request: Request) -> Response:
        scope = request.params.get("guild_id", "global")
        registered = [
            {**command, "id": str(next(self._ids)), "application_id": BOT_ID, "version": "1"}
            for command in (request.json or [])
        ]
        with self.lock:
            self.commands[scope] = registered
        return Response(200, registered)

    def _same_nonce(self, channel_id: str, body: dict[str, Any]) -> dict[str, Any] | None:
        nonce = body.get("nonce")
        if nonce is None or not body.get("enforce_nonce"):
            return None
        same = (
            m for m in self.messages if m["channel_id"] == channel_id and m.get("nonce") == nonce
        )
        return next(same, None)

    def new_message(self, channel_id: str, body: dict[str, Any], flags: int = 0) -> dict[str, Any]:
        message = {
            "id": str(next(self._ids)),
            "type": 19 if body.get("message_reference") else 0,
            "channel_id": channel_id,
            "content": body.get("content") or "",
            "author": BOT_USER,
            "timestamp": datetime.now(UTC).isoformat(),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "components": body.get("components") or [],
            "pinned": False,
            "flags": flags,
        }
        for field in ("nonce", "message_reference", "allowed_mentions"):
            if body.get(field) is not None:
                message[field] = body[field]
        return message


def message_problem(body: dict[str, Any], *, editing: bool = False) -> Response | None:
    """Discord's checks of a message body, as its API documents them."""
    content = body.get("content")
    if not editing and not content and not body.get("components"):
        return discord_error(400, "Cannot send an empty message", 50006)
    if content is not None and len(content) > MAX_CONTENT:
        return invalid_form(f"content: must be {MAX_CONTENT} or fewer in length")
    rows = body.get("components") or []
    if len(rows) > MAX_ROWS:
        return invalid_form(f"components: must be {MAX_ROWS} or fewer in length")
    custom_ids: list[str] = []
    for row in rows:
        buttons = row.get("components") or []
        if row.get("type") != 1 or not 1 <= len(buttons) <= PER_ROW:
            return invalid_form(f"components: an action row holds 1 to {PER_ROW} components")
        for button in buttons:
            custom_id, label = button.get("custom_id") or "", button.get("label") or ""
            if not 1 <= len(custom_id) <= MAX_CUSTOM_ID or len(label) > MAX_LABEL:
                return invalid_form("components: custom_id 1-100, label at most 80 characters")
            custom_ids.append(custom_id)
    if len(set(custom_ids)) != len(custom_ids):
        return invalid_form("components: custom_id must be unique in a message")
    return None


def _application(request: Request) -> Response:
    return Response(
        200,
        {
            "id": BOT_ID,
            "name": "Deliberate",
            "icon": None,
            "description": "",
            "bot_public": True,
            "bot_require_code_grant": False,
            "owner": {**BOT_USER, "id": "1100000000000000099", "bot": False},
            "verify_key": "0" * 64,
            "flags": 1 << 19,  # GATEWAY_MESSAGE_CONTENT_LIMITED: the intent is on
            "team": None,
        },
    )


def _no_content(request: Request) -> Response:
    return Response(204)
