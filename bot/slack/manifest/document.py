"""The Slack app's manifest, made for where the bot runs (``deliberate slack manifest``): in
HTTP mode every request URL points at ``BASE/slack/events``; in Socket Mode there is none.
The scopes are those of the features it is made for (``scopes.py``), so that an app asks
for what it uses and no more.

Create the app at https://api.slack.com/apps -> Create New App -> From a manifest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..oauth.settings import REDIRECT_PATH
from ..serve import EVENTS_PATH
from .scopes import BOT_EVENTS, COMMAND, FEATURES, bot_scopes

__all__ = ["SIGNIN_CALLBACK", "SIGNIN_SCOPES", "Manifest", "app_manifest"]

SIGNIN_CALLBACK = "/signin/slack/callback"  # where the web's Sign in with Slack comes back
SIGNIN_SCOPES = ("openid", "profile")  # Sign in with Slack (OpenID Connect): user scopes


@dataclass(frozen=True)
class Manifest:
    """What the app is made for: ``url`` the public https base of ``deliberate run slack``
    (None in Socket Mode), ``web_url`` that of ``deliberate web`` (sign-in comes back
    there; None: no Sign in with Slack), ``oauth`` an app many teams install."""

    name: str = "Deliberate"
    url: str | None = None
    socket: bool = False
    oauth: bool = False
    web_url: str | None = None
    features: tuple[str, ...] = tuple(FEATURES)

    def __post_init__(self) -> None:
        if not self.socket and self.url is None:
            raise ValueError(
                "HTTP mode needs the bot's public address: --url https://HOST (or "
                "DELIBERATE_WEB_URL), or --socket for Socket Mode"
            )
        for what, url in (("--url", self.url), ("--web-url", self.web_url)):
            if url is not None:
                _check_url(what, url)
        if self.oauth and self.url is None:
            raise ValueError("an app many teams install (--oauth) needs --url for its redirect")
        if not 1 <= len(self.name) <= 35:
            raise ValueError("--name: Slack takes 1 to 35 characters")
        unknown = sorted(set(self.features) - set(FEATURES))
        if unknown:
            known = ", ".join(FEATURES)
            raise ValueError(f"no such feature: {', '.join(unknown)} (known: {known})")


def app_manifest(made: Manifest) -> dict[str, Any]:
    """The manifest, as Slack's app-manifest schema (version 1) lays it out."""
    events = None if made.socket else _join(made.url, EVENTS_PATH)
    command: dict[str, Any] = {
        "command": COMMAND,
        "description": "Shared state, its log, why a key holds its value, proposals awaiting "
        "a person",
        "usage_hint": "state [PREFIX] | log [KEY] | why KEY | pending | show | breakglass ID "
        "REASON | help",
        "should_escape": False,
    }
    if events:
        command["url"] = events
    redirects = []
    if made.oauth:
        redirects.append(_join(made.url, REDIRECT_PATH))
    if made.web_url:
        redirects.append(_join(made.web_url, SIGNIN_CALLBACK))
    scopes: dict[str, list[str]] = {"bot": list(bot_scopes(made.features))}
    if made.web_url:
        scopes["user"] = list(SIGNIN_SCOPES)
    oauth: dict[str, Any] = {"scopes": scopes}
    if redirects:
        oauth = {"redirect_urls": redirects, **oauth}
    subscriptions: dict[str, Any] = {"bot_events": list(BOT_EVENTS)}
    interactivity: dict[str, Any] = {"is_enabled": True}
    if events:
        subscriptions = {"request_url": events, **subscriptions}
        interactivity["request_url"] = events
    return {
        "display_information": {
            "name": made.name,
            "description": "Think out loud with an AI assistant; only buttons and rules "
            "change shared state.",
        },
        "features": {
            "app_home": {"messages_tab_enabled": True, "messages_tab_read_only_enabled": False},
            "bot_user": {"display_name": made.name.lower(), "always_online": True},
            "slash_commands": [command],
        },
        "oauth_config": oauth,
        "settings": {
            "event_subscriptions": subscriptions,
            "interactivity": interactivity,
            "org_deploy_enabled": "orgs" in made.features and made.oauth,
            "socket_mode_enabled": made.socket,
            "token_rotation_enabled": False,
        },
    }


def _join(base: str | None, path: str) -> str:
    assert base is not None
    return base.rstrip("/") + path


def _check_url(what: str, url: str) -> None:
    parts = urlsplit(url)
    loopback = parts.hostname in ("localhost", "127.0.0.1", "::1")
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ValueError(f"{what} {url!r} is not a web address: https://HOST")
    if parts.scheme == "http" and not loopback:
        raise ValueError(f"{what} {url!r}: Slack sends requests to https addresses only")
    if parts.query or parts.fragment or parts.path.strip("/"):
        raise ValueError(f"{what} {url!r}: give the base address alone, with no path")
