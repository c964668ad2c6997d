"""A local OpenID Connect provider shaped like Sign in with Slack: the discovery document,
the authorize page (a "Sign in as NAME" button per user, so a real browser clicks through
it), the token endpoint answering as Slack's ``openid.connect.token`` does (``ok: true``,
``access_token``, ``id_token``), the keys (JWKS) and userinfo. ID tokens are signed RS256
with a key made at start and carry Slack's claims (``https://slack.com/team_id``,
``https://slack.com/user_id``). A code is good once, for its client and redirect URI.

``tamper`` makes the next ID tokens wrong as an attacker's would be: ``audience`` (another
app's), ``issuer``, ``signature`` (signed by another key under the same key id) or
``expired``.

    with OidcProvider([("U0MOD", "T0WEB0001", "Mo Moderator")]) as provider:
        create_app(..., env=provider.env())"""

from __future__ import annotations

import html
import secrets
import time
from base64 import b64decode
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from joserfc import jwt
from joserfc.jwk import RSAKey

from tests.servers.http import HttpServer, Request, Response

__all__ = ["OidcProvider"]

CLIENT_ID = "1234567890.0987654321"
CLIENT_SECRET = "oidc-client-secret"
AUTHORIZE = "/openid/connect/authorize"
TOKEN = "/api/openid.connect.token"


@dataclass(frozen=True)
class _Grant:
    user: tuple[str, str, str]
    client_id: str
    redirect_uri: str
    nonce: str | None


class OidcProvider(HttpServer):
    def __init__(self, users: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.users = {user_id: (user_id, team, name) for user_id, team, name in users}
        self.tamper: str | None = None
        self.issued: list[dict[str, Any]] = []  # the claims of every ID token given out
        self._key = RSAKey.generate_key(2048, parameters={"kid": "k1", "use": "sig"})
        self._grants: dict[str, _Grant] = {}
        self.route("GET", "/.well-known/openid-configuration", self._discovery)
        self.route("GET", AUTHORIZE, self._authorize)
        self.route("POST", AUTHORIZE, self._chosen)
        self.route("POST", TOKEN, self._token)
        self.route("GET", "/openid/connect/keys", self._keys)

    def env(self) -> dict[str, str]:
        """What ``deliberate web`` reads to offer Sign in with Slack here."""
        return {
            "SLACK_CLIENT_ID": CLIENT_ID,
            "SLACK_CLIENT_SECRET": CLIENT_SECRET,
            "DELIBERATE_SLACK_OIDC_URL": self.url,
        }

    def _discovery(self, request: Request) -> Response:
        return Response(
            json={
                "issuer": self.url,
                "authorization_endpoint": self.url + AUTHORIZE,
                "token_endpoint": self.url + TOKEN,
                "userinfo_endpoint": self.url + "/api/openid.connect.userInfo",
                "jwks_uri": self.url + "/openid/connect/keys",
                "scopes_supported": ["openid", "profile", "email"],
                "response_types_supported": ["code"],
                "response_modes_supported": ["form_post"],
                "grant_types_supported": ["authorization_code"],
                "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": ["RS256"],
                "claims_supported": ["sub", "auth_time", "iss", "name", "email"],
                "claims_parameter_supported": False,
                "request_parameter_supported": False,
                "request_uri_parameter_supported": True,
                "token_endpoint_auth_methods_supported": [
                    "client_secret_post",
                    "client_secret_basic",
                ],
            }
        )

    def _authorize(self, request: Request) -> Response:
        asked = {name: request.arg(name) or "" for name in _PASSED}
        if asked["client_id"] != CLIENT_ID or asked["response_type"] != "code":
            return Response(400, body=b"unknown client or response type")
        if "openid" not in asked["scope"].split():
            return Response(400, body=b"scope must include openid")
        hidden = "".join(
            f'<input type="hidden" name="{n}" value="{html.escape(v)}">' for n, v in asked.items()
        )
        buttons = "".join(
            f'<form method="post" action="{AUTHORIZE}">{hidden}'
            f'<input type="hidden" name="user" value="{u}">'
            f"<button>Sign in as {html.escape(name)}</button></form>"
            for u, _, name in self.users.values()
        )
        page = f"<!doctype html><title>Slack</title><h1>Sign in to Slack</h1>{buttons}"
        return Response(body=page.encode(), headers={"Content-Type": "text/html"})

    def _chosen(self, request: Request) -> Response:
        form = request.form()
        user = self.users.get(form.get("user", ""))
        if user is None:
            return Response(400, body=b"no such user")
        code = secrets.token_urlsafe(16)
        self._grants[code] = _Grant(
            user, form["client_id"], form["redirect_uri"], form.get("nonce") or None
        )
        back = urlencode({"code": code, "state": form.get("state", "")})
        return Response(302, headers={"Location": f"{form['redirect_uri']}?{back}"})

    def _token(self, request: Request) -> Response:
        form = request.form()
        client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
        basic = request.header("authorization") or ""
        if basic.startswith("Basic "):
            client_id, _, secret = b64decode(basic[6:]).decode().partition(":")
        if (client_id, secret) != (CLIENT_ID, CLIENT_SECRET):
            return Response(json={"ok": False, "error": "invalid_client"})
        grant = self._grants.pop(form.get("code", ""), None)
        if grant is None or grant.redirect_uri != form.get("redirect_uri"):
            return Response(json={"ok": False, "error": "invalid_code"})
        return Response(
            json={
                "ok": True,
                "access_token": "xoxp-" + secrets.token_hex(8),
                "token_type": "Bearer",
                "id_token": self._id_token(grant),
            }
        )

    def _keys(self, request: Request) -> Response:
        return Response(json={"keys": [self._key.as_dict(private=False, alg="RS256")]})

    def _id_token(self, grant: _Grant) -> str:
        user_id, team, name = grant.user
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.url,
            "sub": user_id,
            "aud": grant.client_id,
            "exp": now + 3600,
            "iat": now,
            "auth_time": now,
            "https://slack.com/user_id": user_id,
            "https://slack.com/team_id": team,
            "https://slack.com/team_name": f"Team {team}",
            "name": name,
        }
        if grant.nonce:
            claims["nonce"] = grant.nonce
        key = self._key
        if self.tamper == "audience":
            claims["aud"] = "another-app"
        elif self.tamper == "issuer":
            claims["iss"] = "https://evil.example"
        elif self.tamper == "expired":
            claims["exp"], claims["iat"] = now - 600, now - 4200  # past any leeway for skew
        elif self.tamper == "signature":
            key = RSAKey.generate_key(2048, parameters={"kid": "k1", "use": "sig"})
        self.issued.append(claims)
        return jwt.encode({"alg": "RS256", "kid": "k1"}, claims, key)


_PASSED = ("client_id", "response_type", "scope", "redirect_uri", "state", "nonce")
