"""A local Twitch Helix API: create a clip, send an announcement, send a chat message, with
Helix's authentication checks, response shapes and rate-limit bucket (``Ratelimit-Limit`` /
``-Remaining`` / ``-Reset`` on every answer; an empty bucket answers 429 until its reset).

    with HelixServer() as helix:
        env = helix.env()      # TWITCH_API_URL, TWITCH_CLIENT_ID, TWITCH_ACCESS_TOKEN, ...
        helix.exhaust(reset_in=1)   # the next request is answered 429 until the reset
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from typing import Any

from tests.servers.http import HttpServer, Request, Response

__all__ = ["HelixServer", "helix_error"]

CLIPS, ANNOUNCEMENTS, CHAT = "/helix/clips", "/helix/chat/announcements", "/helix/chat/messages"
COLORS = {"blue", "green", "orange", "purple", "primary"}


def helix_error(
    status: int, error: str, message: str, headers: dict[str, str] | None = None
) -> Response:
    """Helix's error body: {"error", "status", "message"}."""
    body = {"error": error, "status": status, "message": message}
    return Response(status, body, headers or {})


class HelixServer(HttpServer):
    def __init__(
        self,
        *,
        client_id: str = "test-client-id",
        token: str = "test-helix-token",
        broadcaster_id: str = "1001",
        moderator_ids: tuple[str, ...] = (),
        limit: int = 800,
    ) -> None:
        super().__init__()
        self.client_id, self.token, self.broadcaster_id = client_id, token, broadcaster_id
        self.moderator_ids = {broadcaster_id, *moderator_ids}
        self.limit = limit
        self.remaining = limit
        self.reset_at = math.ceil(time.time()) + 60
        self._bucket_lock = threading.Lock()
        self.clips: list[dict[str, Any]] = []
        self.announcements: list[dict[str, Any]] = []
        self.chat_messages: list[dict[str, Any]] = []
        self.route("POST", CLIPS, self._create_clip)
        self.route("POST", ANNOUNCEMENTS, self._send_announcement)
        self.route("POST", CHAT, self._send_chat_message)

    @property
    def api_url(self) -> str:
        return self.url + "/helix"

    def env(self) -> dict[str, str]:
        return {
            "TWITCH_API_URL": self.api_url,
            "TWITCH_CLIENT_ID": self.client_id,
            "TWITCH_ACCESS_TOKEN": self.token,
            "TWITCH_BROADCASTER_ID": self.broadcaster_id,
        }

    # --- the rate-limit bucket ---------------------------------------------------------

    def set_bucket(self, remaining: int, reset_at: float) -> None:
        """``reset_at``: epoch seconds (whole seconds go out in the header)."""
        with self._bucket_lock:
            self.remaining, self.reset_at = remaining, math.ceil(reset_at)

    def exhaust(self, reset_in: float = 1.0) -> int:
        """Empty the bucket until ``reset_in`` seconds from now; returns the reset (epoch s)."""
        reset_at = math.ceil(time.time() + reset_in)
        self.set_bucket(0, reset_at)
        return reset_at

    def _take_point(self) -> bool:
        """Spend one point; False when the bucket is empty (the request gets a 429)."""
        with self._bucket_lock:
            if time.time() >= self.reset_at:
                self.remaining, self.reset_at = self.limit, math.ceil(time.time()) + 60
            if self.remaining == 0:
                return False
            self.remaining -= 1
            return True

    def _limit_headers(self) -> dict[str, str]:
        with self._bucket_lock:
            return {
                "Ratelimit-Limit": str(self.limit),
                "Ratelimit-Remaining": str(self.remaining),
                "Ratelimit-Reset": str(self.reset_at),
            }

    # --- answering ---------------------------------------------------------------------

    def answer(self, request: Request) -> Response:
        scripted = self.next_scripted(request)
        if scripted is not None:
            return scripted.with_headers(self._limit_headers())
        if not self._take_point():
            too_many = helix_error(429, "Too Many Requests", "Too Many Requests")
            return too_many.with_headers(self._limit_headers())
        refused = self._check_auth(request)
        return (refused or self.routed(request)).with_headers(self._limit_headers())

    def _check_auth(self, request: Request) -> Response | None:
        authorization = request.header("Authorization") or ""
        if not authorization:
            return helix_error(401, "Unauthorized", "OAuth token is missing")
        if authorization != f"Bearer {self.token}":
            return helix_error(401, "Unauthorized", "Invalid OAuth token")
        if request.header("Client-Id") != self.client_id:
            return helix_error(401, "Unauthorized", "Client ID and OAuth token do not match")
        return None

    def _check_broadcaster(self, broadcaster_id: str | None) -> Response | None:
        if not broadcaster_id:
            return helix_error(400, "Bad Request", 'Missing required parameter "broadcaster_id"')
        if broadcaster_id != self.broadcaster_id:
            return helix_error(403, "Forbidden", "The broadcaster_id does not match the user token")
        return None

    def _create_clip(self, request: Request) -> Response:
        refused = self._check_broadcaster(request.arg("broadcaster_id"))
        if refused:
            return refused
        clip_id = "Clip" + secrets.token_hex(6)
        clip = {"id": clip_id, "edit_url": f"https://clips.twitch.tv/{clip_id}/edit"}
        self.clips.append({**clip, "has_delay": request.arg("has_delay") == "true"})
        return Response(202, {"data": [clip]})

    def _send_announcement(self, request: Request) -> Response:
        refused = self._check_broadcaster(request.arg("broadcaster_id"))
        if refused:
            return refused
        if request.arg("moderator_id") not in self.moderator_ids:
            return helix_error(
                403,
                "Forbidden",
                "The user in moderator_id is not one of the broadcaster's moderators",
            )
        body = request.json if isinstance(request.json, dict) else {}
        message, color = body.get("message"), body.get("color", "primary")
        if not isinstance(message, str) or not message:
            return helix_error(400, "Bad Request", 'Missing required parameter "message"')
        if color not in COLORS:
            return helix_error(400, "Bad Request", "The color is not valid")
        self.announcements.append({"message": message, "color": color})
        return Response(204)

    def _send_chat_message(self, request: Request) -> Response:
        body = request.json if isinstance(request.json, dict) else {}
        refused = self._check_broadcaster(body.get("broadcaster_id"))
        if refused:
            return refused
        message = body.get("message")
        if not body.get("sender_id"):
            return helix_error(400, "Bad Request", 'Missing required parameter "sender_id"')
        if not isinstance(message, str) or not message:
            return helix_error(400, "Bad Request", 'Missing required parameter "message"')
        message_id = secrets.token_hex(8)
        self.chat_messages.append(
            {"message_id": message_id, "sender_id": body.get("sender_id"), "message": message}
        )
        return Response(
            200, {"data": [{"message_id": message_id, "is_sent": True, "drop_reason": None}]}
        )

    def drop_next_chat_message(self, code: str, message: str) -> None:
        """Answer the next chat message the way Twitch does when it will not deliver it."""
        dropped = {
            "message_id": "",
            "is_sent": False,
            "drop_reason": {"code": code, "message": message},
        }
        self.script("POST", CHAT, Response(200, {"data": [dropped]}))
