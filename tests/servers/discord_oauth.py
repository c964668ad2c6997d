"""A local Discord for OAuth2 sign-in: the authorize page (a "Sign in as NAME" button per
user), the token endpoint (``client_secret_post``, a code good once for its redirect URI),
and the REST routes a sign-in reads with the user's Bearer token (``/users/@me``,
``/users/@me/guilds`` with ``owner`` and ``permissions``, ``/users/@me/guilds/{id}/member``)
and with the bot's (``/guilds/{id}/roles``), all under ``/api`` as Discord has them.

    with DiscordOAuth(users, roles) as discord:
        create_app(..., env=discord.env())"""

from __future__ import annotations

import html
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from tests.servers.http import HttpServer, Request, Response

__all__ = ["BOT_TOKEN", "DiscordOAuth", "Member"]

CLIENT_ID = "1190000000000000001"
CLIENT_SECRET = "discord-client-secret"
BOT_TOKEN = "bot-token-for-tests"
SCOPES = {"identify", "guilds", "guilds.members.read"}


@dataclass(frozen=True)
class Member:
    """A user of this Discord: the servers they are in, each with whether they own it, the
    permission bits they hold there and their role ids."""

    id: str
    name: str
    guilds: dict[str, tuple[bool, int, list[str]]] = field(default_factory=dict)


class DiscordOAuth(HttpServer):
    def __init__(self, users: list[Member], roles: dict[str, dict[str, str]]) -> None:
        super().__init__()
        self.users = {u.id: u for u in users}
        self.roles = roles  # guild id -> role id -> name
        self._codes: dict[str, tuple[str, str]] = {}  # code -> (user, redirect_uri)
        self._tokens: dict[str, str] = {}  # access token -> user
        self.route("GET", "/api/oauth2/authorize", self._authorize)
        self.route("POST", "/api/oauth2/authorize", self._chosen)
        self.route("POST", "/api/oauth2/token", self._token)
        self.route("GET", "/api/users/@me", self._me)
        self.route("GET", "/api/users/@me/guilds", self._guilds)
        self.route("GET", "/api/users/@me/guilds/{guild}/member", self._member)
        self.route("GET", "/api/guilds/{guild}/roles", self._roles)

    def env(self, *, bot: bool = True) -> dict[str, str]:
        found = {
            "DISCORD_CLIENT_ID": CLIENT_ID,
            "DISCORD_CLIENT_SECRET": CLIENT_SECRET,
            "DISCORD_API_URL": f"{self.url}/api",
        }
        return found | ({"DISCORD_TOKEN": BOT_TOKEN} if bot else {})

    def _authorize(self, request: Request) -> Response:
        asked = {n: request.arg(n) or "" for n in ("client_id", "redirect_uri", "state", "scope")}
        if asked["client_id"] != CLIENT_ID or not set(asked["scope"].split()) >= SCOPES:
            return Response(400, body=b"unknown client or missing scopes")
        hidden = "".join(
            f'<input type="hidden" name="{n}" value="{html.escape(v)}">' for n, v in asked.items()
        )
        forms = "".join(
            f'<form method="post">{hidden}<input type="hidden" name="user" value="{u.id}">'
            f"<button>Sign in as {html.escape(u.name)}</button></form>"
            for u in self.users.values()
        )
        return Response(
            body=f"<!doctype html>{forms}".encode(), headers={"Content-Type": "text/html"}
        )

    def _chosen(self, request: Request) -> Response:
        form = request.form()
        code = secrets.token_urlsafe(12)
        self._codes[code] = (form["user"], form["redirect_uri"])
        back = urlencode({"code": code, "state": form["state"]})
        return Response(302, headers={"Location": f"{form['redirect_uri']}?{back}"})

    def _token(self, request: Request) -> Response:
        form = request.form()
        if (form.get("client_id"), form.get("client_secret")) != (CLIENT_ID, CLIENT_SECRET):
            return Response(401, {"error": "invalid_client"})
        grant = self._codes.pop(form.get("code", ""), None)
        if grant is None or grant[1] != form.get("redirect_uri"):
            return Response(400, {"error": "invalid_grant"})
        token = secrets.token_urlsafe(16)
        self._tokens[token] = grant[0]
        return Response(
            json={
                "access_token": token,
                "token_type": "Bearer",
                "expires_in": 604800,
                "refresh_token": secrets.token_urlsafe(16),
                "scope": " ".join(sorted(SCOPES)),
            }
        )

    def _user(self, request: Request) -> Member | None:
        given = (request.header("authorization") or "").removeprefix("Bearer ")
        user_id = self._tokens.get(given)
        return None if user_id is None else self.users[user_id]

    def _me(self, request: Request) -> Response:
        user = self._user(request)
        if user is None:
            return Response(401, {"message": "401: Unauthorized", "code": 0})
        return Response(
            json={"id": user.id, "username": user.name.lower(), "global_name": user.name}
        )

    def _guilds(self, request: Request) -> Response:
        user = self._user(request)
        if user is None:
            return Response(401, {"message": "401: Unauthorized", "code": 0})
        listed: list[dict[str, Any]] = [
            {"id": gid, "name": f"Server {gid}", "owner": owner, "permissions": str(bits)}
            for gid, (owner, bits, _) in user.guilds.items()
        ]
        return Response(json=listed)

    def _member(self, request: Request) -> Response:
        user = self._user(request)
        guild = request.params["guild"]
        if user is None or guild not in user.guilds:
            return Response(404, {"message": "Unknown Guild", "code": 10004})
        return Response(json={"user": {"id": user.id}, "roles": user.guilds[guild][2]})

    def _roles(self, request: Request) -> Response:
        if request.header("authorization") != f"Bot {BOT_TOKEN}":
            return Response(401, {"message": "401: Unauthorized", "code": 0})
        named = self.roles.get(request.params["guild"], {})
        return Response(json=[{"id": rid, "name": name} for rid, name in named.items()])
