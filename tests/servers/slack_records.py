"""What the local Slack Web API keeps and answers with: whom a bot token speaks for, what an
OAuth code installs, a call as answered, and Slack's error answer (``slack_api`` re-exports
them)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

from tests.servers.http import Response

__all__ = ["DEFAULT_SCOPE", "ApiCall", "BotIdentity", "InstallCode", "basic_auth", "slack_error"]

DEFAULT_SCOPE = "app_mentions:read,channels:history,chat:write,commands"


@dataclass(frozen=True)
class BotIdentity:
    """Whom a bot token speaks for: a team (``team_id``), a team inside an Enterprise Grid
    org (both ids), or a whole org (``org_install``, no team)."""

    team_id: str | None = "T0TEST"
    team_name: str | None = "Test"
    enterprise_id: str | None = None
    enterprise_name: str | None = None
    user_id: str = "U0TESTBOT"  # the bot user
    bot_id: str = "B0TESTBOT"
    org_install: bool = False

    @property
    def url(self) -> str:
        if self.org_install:
            return f"https://{(self.enterprise_name or 'org').lower()}.enterprise.slack.com/"
        return f"https://{(self.team_name or 'team').lower()}.slack.com/"


@dataclass(frozen=True)
class InstallCode:
    """What exchanging one OAuth code installs. ``expires_in``: token rotation is on, the
    bot token lives that long and a refresh token comes with it. ``redirect_uri``: what the
    authorize step was given, which the exchange must repeat."""

    bot: BotIdentity
    installer: str = "U0INSTALLER"
    scope: str = DEFAULT_SCOPE
    expires_in: int | None = None
    redirect_uri: str | None = None


@dataclass(frozen=True)
class ApiCall:
    """A Web API call as answered: its method, its token (None for ``oauth.v2.access``,
    whose client secret is left out of ``fields``) and its fields."""

    method: str
    token: str | None
    fields: dict[str, Any] = field(default_factory=dict)


def slack_error(error: str, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(status, {"ok": False, "error": error}, headers or {})


def basic_auth(authorization: str | None) -> tuple[str, str] | None:
    """``Authorization: Basic base64(client_id:client_secret)``, as slack_sdk sends it."""
    if not authorization or not authorization.startswith("Basic "):
        return None
    try:
        decoded = base64.b64decode(authorization.removeprefix("Basic "), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    client_id, colon, secret = decoded.partition(":")
    return (client_id, secret) if colon else None
