"""A local Slack Web API: ``apps.connections.open`` (Socket Mode), ``auth.test``,
``chat.postMessage``, ``chat.postEphemeral``, ``chat.update`` and ``usergroups.list``, with
the token (Authorization header or ``token`` field), JSON or form bodies, Slack's
``{"ok": false, "error": ...}`` answers, and scriptable 429s with ``Retry-After`` for
slack_sdk's RateLimitErrorRetryHandler.

    with SlackServer() as slack:
        env = slack.env()      # SLACK_BOT_TOKEN, SLACK_API_URL
        slack.rate_limit_next(retry_after=0)
        slack.wait_until(lambda: slack.updates)
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from tests.servers.http import HttpServer, Request, Response

__all__ = ["POST_MESSAGE", "SlackServer", "slack_error"]

POST_MESSAGE = "/api/chat.postMessage"


def slack_error(error: str, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(status, {"ok": False, "error": error}, headers or {})


class SlackServer(HttpServer):
    """``channels``: the channel ids that exist (None accepts any); ``usergroups``: what
    ``usergroups.list`` answers, e.g. ``[{"id": "S1", "handle": "mods", "users": ["U1"]}]``."""

    def __init__(
        self,
        *,
        token: str = "xoxb-test-slack-token",
        channels: set[str] | None = None,
        bot_user: str = "U0TESTBOT",
        bot_id: str = "B0TESTBOT",
        usergroups: list[dict[str, Any]] | None = None,
        app_token: str = "xapp-1-test-app-token",
        socket_url: str | None = None,
    ) -> None:
        super().__init__()
        self.token, self.channels, self.bot_user, self.bot_id = token, channels, bot_user, bot_id
        self.usergroups = usergroups or []
        self.app_token, self.socket_url = app_token, socket_url
        self.messages: list[dict[str, Any]] = []
        self.ephemerals: list[dict[str, Any]] = []
        self.updates: list[dict[str, Any]] = []
        self._ts_lock = threading.Lock()
        self._last_ts = 0.0
        methods: dict[str, Callable[[dict[str, Any]], Response]] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.postEphemeral": self._post_ephemeral,
            "chat.update": self._update,
            "usergroups.list": self._usergroups_list,
        }
        for name, method in methods.items():
            self.route("POST", f"/api/{name}", self._authed(method))
        self.route("POST", "/api/apps.connections.open", self._connections_open)
        self.responses: list[dict[str, Any]] = []
        for kind in ("commands", "actions"):
            self.route("POST", f"/{kind}/{{team}}/{{id}}/{{token}}", self._response_url)

    @property
    def api_url(self) -> str:
        return self.url + "/api/"

    def env(self) -> dict[str, str]:
        return {"SLACK_BOT_TOKEN": self.token, "SLACK_API_URL": self.api_url}

    def rate_limit_next(self, retry_after: int = 0, times: int = 1, method: str = "") -> None:
        """The next ``times`` calls of ``method`` (default chat.postMessage) get 429
        ``ratelimited`` with ``Retry-After`` set."""
        limited = slack_error("ratelimited", 429, {"Retry-After": str(retry_after)})
        path = f"/api/{method}" if method else POST_MESSAGE
        self.script("POST", path, *([limited] * times))

    # --- the methods -----------------------------------------------------------------

    def _authed(self, method: Callable[[dict[str, Any]], Response]) -> Callable[..., Response]:
        def answer(request: Request) -> Response:
            fields = request.json if isinstance(request.json, dict) else dict(request.form())
            authorization = request.header("Authorization") or ""
            token = authorization.removeprefix("Bearer ") if authorization else fields.get("token")
            if not token:
                return slack_error("not_authed")
            if token != self.token:
                return slack_error("invalid_auth")
            return method(fields)

        return answer

    def response_url(self, kind: str) -> str:
        """A ``response_url`` as Slack puts in slash commands and clicks, served here."""
        return f"{self.url}/{kind}/T0TEST/{len(self.requests)}/r3sp0nse"

    def _response_url(self, request: Request) -> Response:
        """What a ``response_url`` takes: a message to post, or to replace the original with."""
        if not isinstance(request.json, dict):
            return Response(400, body=b"invalid_payload")
        self.responses.append({"path": request.path, **request.json})
        return Response(200, body=b"ok")

    def _connections_open(self, request: Request) -> Response:
        """Socket Mode: only the app-level token opens a connection."""
        if request.header("Authorization") != f"Bearer {self.app_token}":
            return slack_error("invalid_auth")
        if self.socket_url is None:
            return slack_error("not_allowed_token_type")
        return _ok(url=self.socket_url)

    def _auth_test(self, fields: dict[str, Any]) -> Response:
        return _ok(
            url="https://test.slack.com/",
            team="Test",
            user="deliberate",
            team_id="T0TEST",
            user_id=self.bot_user,
            bot_id=self.bot_id,
        )

    def _channel_problem(self, fields: dict[str, Any]) -> Response | None:
        channel = fields.get("channel")
        if not channel or (self.channels is not None and channel not in self.channels):
            return slack_error("channel_not_found")
        if not fields.get("text") and not fields.get("blocks") and not fields.get("attachments"):
            return slack_error("no_text")
        return None

    def _post_message(self, fields: dict[str, Any]) -> Response:
        problem = self._channel_problem(fields)
        if problem is not None:
            return problem
        ts = self._next_ts()
        message: dict[str, Any] = {
            "type": "message",
            "user": self.bot_user,
            "bot_id": self.bot_id,
            "text": fields.get("text"),
            "ts": ts,
        }
        for name in ("thread_ts", "blocks"):
            if fields.get(name):
                message[name] = _listed(fields[name])
        self.messages.append({"channel": fields["channel"], **message})
        return _ok(channel=fields["channel"], ts=ts, message=message)

    def _post_ephemeral(self, fields: dict[str, Any]) -> Response:
        problem = self._channel_problem(fields)
        if problem is not None:
            return problem
        if not fields.get("user"):
            return slack_error("user_not_in_channel")
        self.ephemerals.append({**fields, "blocks": _listed(fields.get("blocks"))})
        return _ok(message_ts=self._next_ts())

    def _update(self, fields: dict[str, Any]) -> Response:
        problem = self._channel_problem(fields)
        if problem is not None:
            return problem
        ts = fields.get("ts")
        original = next(
            (m for m in self.messages if m["ts"] == ts and m["channel"] == fields["channel"]),
            None,
        )
        if original is None:
            return slack_error("message_not_found")
        original.update(text=fields.get("text"), blocks=_listed(fields.get("blocks")))
        self.updates.append({**fields, "blocks": _listed(fields.get("blocks"))})
        return _ok(channel=fields["channel"], ts=ts, text=fields.get("text"))

    def _usergroups_list(self, fields: dict[str, Any]) -> Response:
        with_users = str(fields.get("include_users")).lower() in ("1", "true")
        groups = [
            {k: v for k, v in group.items() if with_users or k != "users"}
            for group in self.usergroups
        ]
        return _ok(usergroups=groups)

    def _next_ts(self) -> str:
        with self._ts_lock:  # Slack's ts is unique per channel; strictly increasing will do
            self._last_ts = max(time.time(), self._last_ts + 0.000001)
            return f"{self._last_ts:.6f}"


def _ok(**fields: Any) -> Response:
    return Response(200, {"ok": True, **fields})


def _listed(value: Any) -> Any:
    """slack_sdk sends ``blocks`` as a JSON string in form bodies and as a list in JSON ones."""
    if isinstance(value, str) and value.startswith("["):
        return json.loads(value)
    return value
