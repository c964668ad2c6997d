"""A local Slack Web API: ``apps.connections.open`` (Socket Mode), ``auth.test``,
``chat.postMessage``, ``chat.postEphemeral``, ``chat.update``, ``usergroups.list``,
``views.open``, ``users.info``, ``conversations.open`` (``slack_people``) and
``oauth.v2.access``, with the token (Authorization header or ``token``
field), JSON or form bodies, Slack's ``{"ok": false, "error": ...}`` answers, and scriptable
429s with ``Retry-After`` for slack_sdk's RateLimitErrorRetryHandler.

``views.open`` is ``slack_modals.Modals``'s: ``views`` lists each modal opened, with the
trigger id that opened it.

    with SlackServer() as slack:
        env = slack.env()      # SLACK_BOT_TOKEN, SLACK_API_URL
        slack.rate_limit_next(retry_after=0)
        slack.wait_until(lambda: slack.updates)

Many teams: each bot token knows whom it speaks for (``BotIdentity``: team, Enterprise Grid
org, bot user), which ``auth.test`` tells and the posts carry; ``calls`` records every call
with its token, so a test sees that a post to team B went with team B's token. The token given
to the constructor is team T0TEST's; ``add_bot`` adds others.

The OAuth install: a test says what a code installs, and ``oauth.v2.access`` exchanges it once
for a new bot token, as Slack documents it (client id and secret by HTTP Basic or as fields;
``redirect_uri`` checked when the authorize step had one; ``team`` null and ``enterprise`` set
for an org-wide install). With ``expires_in`` the token rotates: it stops working then
(``token_expired``), and ``grant_type=refresh_token`` swaps the refresh token, once, for a new
pair.

    slack.add_install_code("c0de", BotIdentity("T0SECOND", "Second"), expires_in=43200)
    env = slack.oauth_env()   # SLACK_CLIENT_ID, SLACK_CLIENT_SECRET, SLACK_API_URL
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from tests.servers.http import HttpServer, Request, Response
from tests.servers.slack_modals import Modals
from tests.servers.slack_people import People
from tests.servers.slack_records import (
    DEFAULT_SCOPE,
    ApiCall,
    BotIdentity,
    InstallCode,
    basic_auth,
    slack_error,
)

__all__ = [
    "CLIENT_ID",
    "CLIENT_SECRET",
    "POST_MESSAGE",
    "ApiCall",
    "BotIdentity",
    "InstallCode",
    "SlackServer",
    "slack_error",
]

POST_MESSAGE = "/api/chat.postMessage"
CLIENT_ID, CLIENT_SECRET = "1111111111.2222222222", "c0ffee5ecret0f7he7e57app0000000"


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
        client_id: str = CLIENT_ID,
        client_secret: str = CLIENT_SECRET,
        app_id: str = "A0TEST",
    ) -> None:
        super().__init__()
        self.token, self.channels, self.bot_user, self.bot_id = token, channels, bot_user, bot_id
        self.usergroups = usergroups or []
        self.org_teams: dict[str, str] = {}  # team id -> its Enterprise Grid org (team.info)
        self.app_token, self.socket_url = app_token, socket_url
        self.client_id, self.client_secret, self.app_id = client_id, client_secret, app_id
        self.messages: list[dict[str, Any]] = []
        self.ephemerals: list[dict[str, Any]] = []
        self.updates: list[dict[str, Any]] = []
        self.modals = Modals(app_id)
        self.people = People()
        self.calls: list[ApiCall] = []
        self.bots: dict[str, BotIdentity] = {token: BotIdentity(user_id=bot_user, bot_id=bot_id)}
        self._expires: dict[str, float] = {}
        self._revoked: set[str] = set()
        self._codes: dict[str, InstallCode] = {}
        self._refresh_tokens: dict[str, InstallCode] = {}
        self._issued = itertools.count(1)
        self._tokens_lock = threading.Lock()
        self._ts_lock = threading.Lock()
        self._last_ts = 0.0
        methods: dict[str, Callable[[dict[str, Any], BotIdentity], Response]] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.postEphemeral": self._post_ephemeral,
            "chat.update": self._update,
            "usergroups.list": self._usergroups_list,
            "team.info": self._team_info,
            "views.open": self._views_open,
            "users.info": self.people.info,
            "conversations.open": self.people.open,
        }
        for name, method in methods.items():
            self.route("POST", f"/api/{name}", self._authed(name, method))
        self.route("POST", "/api/apps.connections.open", self._connections_open)
        self.route("POST", "/api/oauth.v2.access", self._oauth_v2_access)
        self.responses: list[dict[str, Any]] = []
        for kind in ("commands", "actions"):
            self.route("POST", f"/{kind}/{{team}}/{{id}}/{{token}}", self._response_url)

    @property
    def api_url(self) -> str:
        return self.url + "/api/"

    def env(self) -> dict[str, str]:
        return {"SLACK_BOT_TOKEN": self.token, "SLACK_API_URL": self.api_url}

    def oauth_env(self) -> dict[str, str]:
        """The app's credentials for the OAuth flow (no bot token: installs bring them)."""
        return {
            "SLACK_CLIENT_ID": self.client_id,
            "SLACK_CLIENT_SECRET": self.client_secret,
            "SLACK_API_URL": self.api_url,
        }

    # --- tokens and installs ------------------------------------------------------------

    def add_bot(self, token: str, bot: BotIdentity, *, expires_in: float | None = None) -> None:
        """A bot token for ``bot`` (another team's, an org's), valid from now on."""
        with self._tokens_lock:
            self.bots[token] = bot
            if expires_in is not None:
                self._expires[token] = time.time() + expires_in

    def add_install_code(
        self,
        code: str,
        bot: BotIdentity,
        *,
        installer: str = "U0INSTALLER",
        scope: str = DEFAULT_SCOPE,
        expires_in: int | None = None,
        redirect_uri: str | None = None,
    ) -> None:
        """``oauth.v2.access`` with ``code`` installs the app for ``bot``'s team (or org)."""
        with self._tokens_lock:
            self._codes[code] = InstallCode(bot, installer, scope, expires_in, redirect_uri)

    def revoke(self, token: str) -> None:
        with self._tokens_lock:
            self._revoked.add(token)

    def tokens_of(self, team_id: str | None, enterprise_id: str | None = None) -> list[str]:
        """The bot tokens issued to a team (with ``team_id`` None and an ``enterprise_id``:
        to an org), oldest first."""
        with self._tokens_lock:
            bots = list(self.bots.items())
        return [
            token
            for token, bot in bots
            if bot.team_id == team_id and enterprise_id in (None, bot.enterprise_id)
        ]

    def calls_to(self, method: str) -> list[ApiCall]:
        return [call for call in list(self.calls) if call.method == method]

    def rate_limit_next(self, retry_after: int = 0, times: int = 1, method: str = "") -> None:
        """The next ``times`` calls of ``method`` (default chat.postMessage) get 429
        ``ratelimited`` with ``Retry-After`` set."""
        limited = slack_error("ratelimited", 429, {"Retry-After": str(retry_after)})
        path = f"/api/{method}" if method else POST_MESSAGE
        self.script("POST", path, *([limited] * times))

    # --- the methods -----------------------------------------------------------------

    def _authed(
        self, name: str, method: Callable[[dict[str, Any], BotIdentity], Response]
    ) -> Callable[..., Response]:
        def answer(request: Request) -> Response:
            fields = request.json if isinstance(request.json, dict) else dict(request.form())
            authorization = request.header("Authorization") or ""
            token = authorization.removeprefix("Bearer ") if authorization else fields.get("token")
            self.calls.append(ApiCall(name, token or None, dict(fields)))
            if not token:
                return slack_error("not_authed")
            with self._tokens_lock:
                bot, expires = self.bots.get(token), self._expires.get(token)
                revoked = token in self._revoked
            if bot is None:
                return slack_error("invalid_auth")
            if revoked:
                return slack_error("token_revoked")
            if expires is not None and time.time() >= expires:
                return slack_error("token_expired")
            return method(fields, bot)

        return answer

    def _oauth_v2_access(self, request: Request) -> Response:
        """An install (``code``) or a token rotation (``grant_type=refresh_token``)."""
        fields = request.json if isinstance(request.json, dict) else dict(request.form())
        client = basic_auth(request.header("Authorization"))
        client_id, secret = client or (fields.get("client_id"), fields.get("client_secret"))
        shown = {k: v for k, v in fields.items() if k != "client_secret"}
        self.calls.append(ApiCall("oauth.v2.access", None, shown))
        if client_id != self.client_id:
            return slack_error("invalid_client_id")
        if secret != self.client_secret:
            return slack_error("bad_client_secret")
        grant = fields.get("grant_type") or "authorization_code"
        with self._tokens_lock:
            if grant == "refresh_token":
                install = self._refresh_tokens.pop(fields.get("refresh_token") or "", None)
                if install is None:
                    return slack_error("invalid_refresh_token")
            elif grant == "authorization_code":
                install = self._codes.get(fields.get("code") or "")
                if install is None:
                    return slack_error("invalid_code")
                if install.redirect_uri is not None and (
                    fields.get("redirect_uri") != install.redirect_uri
                ):
                    return slack_error("bad_redirect_uri")
                del self._codes[fields["code"]]
            else:
                return slack_error("invalid_grant_type")
            return _ok(**self._grant(install))

    def _grant(self, install: InstallCode) -> dict[str, Any]:
        """A new bot token for ``install`` (and a refresh token when it rotates)."""
        bot, serial = install.bot, next(self._issued)
        owner = bot.team_id or bot.enterprise_id
        rotates = install.expires_in is not None
        token = f"xoxe.xoxb-1-{owner}-{serial}" if rotates else f"xoxb-{owner}-{serial}"
        self.bots[token] = bot
        granted: dict[str, Any] = {
            "access_token": token,
            "token_type": "bot",
            "scope": install.scope,
            "bot_user_id": bot.user_id,
            "app_id": self.app_id,
            "team": None if bot.org_install else {"id": bot.team_id, "name": bot.team_name},
            "enterprise": (
                {"id": bot.enterprise_id, "name": bot.enterprise_name}
                if bot.enterprise_id
                else None
            ),
            "is_enterprise_install": bot.org_install,
            "authed_user": {"id": install.installer},
        }
        if install.expires_in is not None:
            refresh = f"xoxe-1-{owner}-{serial}"
            self._refresh_tokens[refresh] = install
            self._expires[token] = time.time() + install.expires_in
            granted |= {"refresh_token": refresh, "expires_in": install.expires_in}
        return granted

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

    def _team_info(self, fields: dict[str, Any], bot: BotIdentity) -> Response:
        """A team the token can see: its own, or one of its org's (``org_teams``, which a
        test fills); any other is ``team_not_found``."""
        team = str(fields.get("team") or bot.team_id or "")
        org = bot.enterprise_id
        if team != bot.team_id and not (org and self.org_teams.get(team) == org):
            return slack_error("team_not_found")
        found: dict[str, Any] = {"id": team, "name": team.lower(), "domain": team.lower()}
        if org:
            found["enterprise_id"] = org
        return _ok(team=found)

    def _auth_test(self, fields: dict[str, Any], bot: BotIdentity) -> Response:
        told: dict[str, Any] = {
            "url": bot.url,
            "team": bot.team_name,
            "user": "deliberate",
            "team_id": bot.team_id,
            "user_id": bot.user_id,
            "bot_id": bot.bot_id,
            "is_enterprise_install": bot.org_install,
        }
        if bot.enterprise_id:
            told["enterprise_id"] = bot.enterprise_id
        return _ok(**told)

    def direct(self, user_id: str) -> list[ApiCall]:
        """The posts to ``user_id``'s direct message channel (its text in ``fields``), each
        with the token that made it."""
        channel = self.people.channel_of(user_id)
        return [c for c in self.calls_to("chat.postMessage") if c.fields.get("channel") == channel]

    def _channel_problem(self, fields: dict[str, Any]) -> Response | None:
        channel = fields.get("channel")
        known = self.channels is None or channel in self.channels or self.people.holds(channel)
        if not channel or not known:
            return slack_error("channel_not_found")
        if not fields.get("text") and not fields.get("blocks") and not fields.get("attachments"):
            return slack_error("no_text")
        return None

    def _post_message(self, fields: dict[str, Any], bot: BotIdentity) -> Response:
        problem = self._channel_problem(fields)
        if problem is not None:
            return problem
        ts = self._next_ts()
        message: dict[str, Any] = {
            "type": "message",
            "user": bot.user_id,
            "bot_id": bot.bot_id,
            "text": fields.get("text"),
            "ts": ts,
        }
        for name in ("thread_ts", "blocks"):
            if fields.get(name):
                message[name] = _listed(fields[name])
        self.messages.append({"channel": fields["channel"], **message})
        return _ok(channel=fields["channel"], ts=ts, message=message)

    def _post_ephemeral(self, fields: dict[str, Any], bot: BotIdentity) -> Response:
        problem = self._channel_problem(fields)
        if problem is not None:
            return problem
        if not fields.get("user"):
            return slack_error("user_not_in_channel")
        self.ephemerals.append({**fields, "blocks": _listed(fields.get("blocks"))})
        return _ok(message_ts=self._next_ts())

    def _update(self, fields: dict[str, Any], bot: BotIdentity) -> Response:
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

    @property
    def views(self) -> list[dict[str, Any]]:
        """The modals opened: each ``{"trigger_id": ..., "view": ...}``, as Slack stores it."""
        return self.modals.opened

    def _views_open(self, fields: dict[str, Any], bot: BotIdentity) -> Response:
        return Response(200, self.modals.open(fields, team_id=bot.team_id, bot_id=bot.bot_id))

    def _usergroups_list(self, fields: dict[str, Any], bot: BotIdentity) -> Response:
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
