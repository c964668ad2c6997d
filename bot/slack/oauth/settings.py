"""Bolt's ``OAuthSettings`` from the environment, the installations and states in Redis:

    SLACK_CLIENT_ID      the app's client id (Basic Information → App Credentials); unset or
                         empty: no OAuth, the bot runs with SLACK_BOT_TOKEN as before
    SLACK_CLIENT_SECRET  its client secret; required with SLACK_CLIENT_ID
    SLACK_SCOPES         the bot scopes to ask for, separated by commas or spaces; by default
                         those of every feature (``DEFAULT_SCOPES``, from ``manifest/scopes.py``)
    SLACK_REDIRECT_URI   optional: the redirect URL registered with the app,
                         ``https://HOST/slack/oauth_redirect``; without it Slack takes the
                         app's only registered one
    SLACK_API_URL        the Web API somewhere else (a proxy, a test server), as with the token

Token rotation needs nothing here: it is switched on in the app's settings (the manifest's
``token_rotation_enabled``; Slack does not let it be switched off again). Then
``oauth.v2.access`` answers with a refresh token and an expiry, and Bolt exchanges a bot token
that expires within two hours (``token_rotation_expiration_minutes``) for a new one with
``oauth.v2.access(grant_type=refresh_token)`` before using it; the store saves the new pair.
Slack recommends rotation; with it off, tokens never expire and nothing is refreshed."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.oauth.authorize_url_generator import AuthorizeUrlGenerator

from ..manifest.scopes import bot_scopes
from .authorize import store_authorize
from .installations import RedisInstallationStore
from .states import DEFAULT_EXPIRATION_SEC, MAX_OUTSTANDING, RedisOAuthStateStore

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["DEFAULT_SCOPES", "INSTALL_PATH", "REDIRECT_PATH", "OAuthConfig", "oauth_settings"]

INSTALL_PATH = "/slack/install"
REDIRECT_PATH = "/slack/oauth_redirect"
TIMEOUT_SEC = 10
_CLIENT_ID = re.compile(r"[0-9]{1,30}\.[0-9]{1,30}")
_SCOPE = re.compile(r"[a-z][a-z0-9_.\-]*(?::[a-z0-9_.\-]+)*")
_LOOPBACK = {"localhost", "127.0.0.1", "::1"}
log = logging.getLogger("deliberate.slack.oauth")


DEFAULT_SCOPES = bot_scopes()  # what the adapter needs, every feature on


@dataclass(frozen=True)
class OAuthConfig:
    client_id: str
    client_secret: str = field(repr=False)
    scopes: tuple[str, ...] = DEFAULT_SCOPES
    redirect_uri: str | None = None
    api_url: str = WebClient.BASE_URL

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> OAuthConfig | None:
        """None without SLACK_CLIENT_ID; ValueError naming the variable that is missing or
        malformed (never quoting the secret)."""
        client_id = env.get("SLACK_CLIENT_ID", "").strip()
        if not client_id:
            return None
        if not _CLIENT_ID.fullmatch(client_id):
            raise ValueError(
                "SLACK_CLIENT_ID must be the app's client id, digits.digits (Basic Information)"
            )
        secret = env.get("SLACK_CLIENT_SECRET", "").strip()
        if not secret:
            raise ValueError("SLACK_CLIENT_SECRET is not set: it comes with SLACK_CLIENT_ID")
        if not secret.isascii() or not secret.isprintable() or " " in secret:
            raise ValueError("SLACK_CLIENT_SECRET must be the app's client secret, one word")
        return cls(
            client_id,
            secret,
            _scopes(env.get("SLACK_SCOPES", "")),
            _redirect_uri(env.get("SLACK_REDIRECT_URI", "").strip()),
            _api_url(env.get("SLACK_API_URL", "").strip()),
        )

    def web_client(self) -> WebClient:
        """A client without a token for the App and the OAuth flow: it waits out 429s, and
        its logger never writes slack_sdk's debug dumps of request bodies, which carry the
        client secret, codes and tokens here."""
        quiet = logging.getLogger("deliberate.slack.oauth.api")
        quiet.setLevel(logging.INFO)
        return WebClient(
            base_url=self.api_url,
            timeout=TIMEOUT_SEC,
            logger=quiet,
            retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2)],
        )

    def settings(
        self,
        redis: RedisClient,
        *,
        client: WebClient | None = None,
        max_install_states: int = MAX_OUTSTANDING,
    ) -> OAuthSettings:
        """Bolt's settings: the install link 302s to Slack (no page of its own), installations
        and states in ``redis`` (at most ``max_install_states`` install links outstanding),
        token refreshes through ``client`` (default ``web_client()``)."""
        store = RedisInstallationStore(redis, self.client_id)
        settings = OAuthSettings(
            client_id=self.client_id,
            client_secret=self.client_secret,
            scopes=list(self.scopes),
            user_scopes=[],
            redirect_uri=self.redirect_uri,
            install_path=INSTALL_PATH,
            install_page_rendering_enabled=False,
            redirect_uri_path=REDIRECT_PATH,
            installation_store=store,
            state_store=RedisOAuthStateStore(
                redis,
                self.client_id,
                expiration_seconds=DEFAULT_EXPIRATION_SEC,
                max_outstanding=max_install_states,
            ),
            state_expiration_seconds=DEFAULT_EXPIRATION_SEC,
            logger=log,
        )
        # OAuthSettings falls back on os.environ for what is None; this config is the env
        settings.redirect_uri = self.redirect_uri
        settings.authorize_url_generator = _AuthorizeUrl(
            client_id=self.client_id,
            redirect_uri=self.redirect_uri,
            scopes=list(self.scopes),
            user_scopes=[],
            authorization_url=settings.authorization_url,
        )
        # Bolt's own authorize refreshes tokens through a default client (slack.com), and
        # asks Slack about the token at every request
        settings.authorize = store_authorize(
            logger=log,
            installation_store=store,
            client_id=self.client_id,
            client_secret=self.client_secret,
            token_rotation_expiration_minutes=settings.token_rotation_expiration_minutes,
            client=client or self.web_client(),
        )
        return settings


def oauth_settings(
    env: Mapping[str, str], redis: RedisClient, *, client: WebClient | None = None
) -> OAuthSettings | None:
    """Bolt's OAuth settings from ``env``, or None when SLACK_CLIENT_ID is unset."""
    config = OAuthConfig.from_env(env)
    return None if config is None else config.settings(redis, client=client)


class _AuthorizeUrl(AuthorizeUrlGenerator):
    """Slack's authorize URL with its query encoded: slack_sdk's pastes the values in as
    they are, and ``team`` comes from the install link's own query, which anyone can write."""

    def generate(self, state: str, team: str | None = None) -> str:
        query: dict[str, Any] = {
            "state": state,
            "client_id": self.client_id,
            "scope": ",".join(self.scopes or []),
            "user_scope": ",".join(self.user_scopes or []),
        }
        if self.redirect_uri is not None:
            query["redirect_uri"] = self.redirect_uri
        if team is not None:
            query["team"] = team
        return f"{self.authorization_url}?{urlencode(query, safe=',:')}"


def _scopes(text: str) -> tuple[str, ...]:
    if not text.strip():
        return DEFAULT_SCOPES
    scopes = tuple(dict.fromkeys(s for s in re.split(r"[,\s]+", text) if s))
    bad = [s for s in scopes if not _SCOPE.fullmatch(s)]
    if bad or not scopes:
        raise ValueError(
            f"SLACK_SCOPES: {', '.join(map(repr, bad))} is not a Slack scope "
            "(scopes look like chat:write or commands, separated by commas)"
        )
    return scopes


def _redirect_uri(text: str) -> str | None:
    if not text:
        return None
    parts = urlsplit(text)
    secure = parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in _LOOPBACK)
    if not secure or not parts.hostname or parts.username or parts.query or parts.fragment:
        raise ValueError(
            "SLACK_REDIRECT_URI must be an https URL (http only on this machine) without "
            f"query or fragment, e.g. https://bot.example.org{REDIRECT_PATH}"
        )
    if parts.path != REDIRECT_PATH:
        raise ValueError(f"SLACK_REDIRECT_URI must end in {REDIRECT_PATH}, where Slack answers")
    return text


def _api_url(text: str) -> str:
    if not text:
        return WebClient.BASE_URL
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("SLACK_API_URL must be an http(s) URL, e.g. https://slack.com/api/")
    return text.rstrip("/") + "/"  # slack_sdk joins method names onto it
