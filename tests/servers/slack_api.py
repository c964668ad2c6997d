"""A local Slack Web API with ``chat.postMessage``: the token (Authorization header or ``token``
field), JSON or form bodies, Slack's ``{"ok": false, "error": ...}`` answers, and scriptable
429s with ``Retry-After`` for slack_sdk's RateLimitErrorRetryHandler.

    with SlackServer() as slack:
        env = slack.env()      # SLACK_BOT_TOKEN, SLACK_API_URL
        slack.rate_limit_next(retry_after=0)
"""

from __future__ import annotations

import threading
import time
from typing import Any

from tests.servers.http import HttpServer, Request, Response

__all__ = ["POST_MESSAGE", "SlackServer", "slack_error"]

POST_MESSAGE = "/api/chat.postMessage"


def slack_error(error: str, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(status, {"ok": False, "error": error}, headers or {})


class SlackServer(HttpServer):
    """``channels``: the channel ids that exist; None accepts any."""

    def __init__(
        self,
        *,
        token: str = "xoxb-test-slack-token",
        channels: set[str] | None = None,
        bot_user: str = "U0TESTBOT",
    ) -> None:
        super().__init__()
        self.token, self.channels, self.bot_user = token, channels, bot_user
        self.messages: list[dict[str, Any]] = []
        self._ts_lock = threading.Lock()
        self._last_ts = 0.0
        self.route("POST", POST_MESSAGE, self._post_message)

    @property
    def api_url(self) -> str:
        return self.url + "/api/"

    def env(self) -> dict[str, str]:
        return {"SLACK_BOT_TOKEN": self.token, "SLACK_API_URL": self.api_url}

    def rate_limit_next(self, retry_after: int = 0, times: int = 1) -> None:
        """The next ``times`` postMessage calls get 429 ``ratelimited``, ``Retry-After`` set."""
        limited = slack_error("ratelimited", 429, {"Retry-After": str(retry_after)})
        self.script("POST", POST_MESSAGE, *([limited] * times))

    def _fields(self, request: Request) -> dict[str, Any]:
        if isinstance(request.json, dict):
            return request.json
        return dict(request.form())

    def _token(self, request: Request, fields: dict[str, Any]) -> str | None:
        authorization = request.header("Authorization") or ""
        if authorization.startswith("Bearer "):
            return authorization.removeprefix("Bearer ")
        token = fields.get("token")
        return token if isinstance(token, str) else None

    def _next_ts(self) -> str:
        with self._ts_lock:  # Slack's ts is unique per channel; strictly increasing will do
            self._last_ts = max(time.time(), self._last_ts + 0.000001)
            return f"{self._last_ts:.6f}"

    def _post_message(self, request: Request) -> Response:
        fields = self._fields(request)
        token = self._token(request, fields)
        if not token:
            return slack_error("not_authed")
        if token != self.token:
            return slack_error("invalid_auth")
        channel = fields.get("channel")
        if not channel:
            return slack_error("channel_not_found")
        if self.channels is not None and channel not in self.channels:
            return slack_error("channel_not_found")
        text = fields.get("text")
        if not text and not fields.get("blocks") and not fields.get("attachments"):
            return slack_error("no_text")
        ts = self._next_ts()
        message: dict[str, Any] = {"type": "message", "user": self.bot_user, "text": text, "ts": ts}
        if fields.get("thread_ts"):
            message["thread_ts"] = fields["thread_ts"]
        self.messages.append({"channel": channel, **message})
        return Response(200, {"ok": True, "channel": channel, "ts": ts, "message": message})
