"""A local Discord REST API (v10) with ``POST /channels/{channel_id}/messages``: the bot token,
Discord's ``{"message", "code"}`` errors, the message object on success, ``nonce`` with
``enforce_nonce`` (the same nonce in one channel returns the message already created), and
scriptable 429s carrying ``retry_after``.

    with DiscordServer() as discord:
        env = discord.env()    # DISCORD_TOKEN, DISCORD_API_URL
        discord.rate_limit_next(retry_after=0.2)
"""

from __future__ import annotations

import itertools
import threading
from datetime import UTC, datetime
from typing import Any

from tests.servers.http import HttpServer, Request, Response

__all__ = ["MESSAGES", "DiscordServer", "discord_error"]

MESSAGES = "/api/v10/channels/{channel_id}/messages"


def discord_error(
    status: int, message: str, code: int = 0, headers: dict[str, str] | None = None
) -> Response:
    return Response(status, {"message": message, "code": code}, headers or {})


class DiscordServer(HttpServer):
    """``channels``: the channel ids that exist; None accepts any."""

    def __init__(
        self, *, token: str = "test-discord-bot-token", channels: set[str] | None = None
    ) -> None:
        super().__init__()
        self.token, self.channels = token, channels
        self.messages: list[dict[str, Any]] = []
        self._ids = itertools.count(1_200_000_000_000_000_000)
        self._lock_messages = threading.Lock()
        self.route("POST", MESSAGES, self._create_message)

    @property
    def api_url(self) -> str:
        return self.url + "/api/v10"

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

    def _create_message(self, request: Request) -> Response:
        if request.header("Authorization") != f"Bot {self.token}":
            return discord_error(401, "401: Unauthorized")
        channel_id = request.params["channel_id"]
        if self.channels is not None and channel_id not in self.channels:
            return discord_error(404, "Unknown Channel", 10003)
        body = request.json if isinstance(request.json, dict) else {}
        content = body.get("content")
        if not content:
            return discord_error(400, "Cannot send an empty message", 50006)
        with self._lock_messages:
            earlier = self._same_nonce(channel_id, body)
            if earlier is not None:
                return Response(200, earlier)
            message = self._message(channel_id, content, body.get("nonce"))
            self.messages.append(message)
        return Response(200, message)

    def _same_nonce(self, channel_id: str, body: dict[str, Any]) -> dict[str, Any] | None:
        nonce = body.get("nonce")
        if nonce is None or not body.get("enforce_nonce"):
            return None
        same = (
            m for m in self.messages if m["channel_id"] == channel_id and m.get("nonce") == nonce
        )
        return next(same, None)

    def _message(self, channel_id: str, content: str, nonce: Any) -> dict[str, Any]:
        message = {
            "id": str(next(self._ids)),
            "type": 0,
            "channel_id": channel_id,
            "content": content,
            "author": {"id": "1100000000000000001", "username": "deliberate", "bot": True},
            "timestamp": datetime.now(UTC).isoformat(),
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
        }
        if nonce is not None:
            message["nonce"] = nonce
        return message
