"""The Slack adapter's settings, from the environment: ``SLACK_BOT_TOKEN`` for one team, or
``SLACK_CLIENT_ID`` and ``SLACK_CLIENT_SECRET`` for an app that teams install (OAuth, see
``bot.slack.oauth``); ``SLACK_APP_TOKEN`` for Socket Mode, else ``SLACK_SIGNING_SECRET`` for
HTTP mode; ``SLACK_API_URL`` to reach the Web API somewhere else (a proxy, a test server)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

from .oauth import OAuthConfig

__all__ = ["SlackSettings"]

TIMEOUT_SEC = 10


@dataclass(frozen=True)
class SlackSettings:
    bot_token: str
    signing_secret: str = ""
    app_token: str = ""
    api_url: str = WebClient.BASE_URL
    oauth: OAuthConfig | None = None  # installed by many teams, each with its own token

    @property
    def socket_mode(self) -> bool:
        return bool(self.app_token)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SlackSettings:
        """ValueError naming what is missing or malformed."""
        bot_token = env.get("SLACK_BOT_TOKEN", "").strip()
        app_token = env.get("SLACK_APP_TOKEN", "").strip()
        secret = env.get("SLACK_SIGNING_SECRET", "").strip()
        oauth = OAuthConfig.from_env(env)
        if oauth is not None and bot_token:
            raise ValueError(
                "set SLACK_BOT_TOKEN (one team) or SLACK_CLIENT_ID (an app teams install), not both"
            )
        if oauth is not None and not secret:
            raise ValueError(
                "SLACK_SIGNING_SECRET is not set: an installable app serves HTTP (install "
                "link, redirect, events), and every request must be checked"
            )
        if not bot_token and oauth is None:
            raise ValueError(
                "SLACK_BOT_TOKEN is not set: the bot token (xoxb-…) of the Slack app (or "
                "SLACK_CLIENT_ID and SLACK_CLIENT_SECRET for an app teams install)"
            )
        if app_token and not app_token.startswith("xapp-"):
            raise ValueError("SLACK_APP_TOKEN must be an app-level token (xapp-…)")
        if not app_token and not secret:
            raise ValueError(
                "set SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP mode): "
                "without either, Slack's requests cannot be received safely"
            )
        # slack_sdk joins method names onto the base URL, so it must end with a slash
        api_url = env.get("SLACK_API_URL", "").strip() or WebClient.BASE_URL
        return cls(bot_token, secret, app_token, api_url.rstrip("/") + "/", oauth)

    def web_client(self) -> WebClient:
        """A client that waits out 429s (``Retry-After``: nothing was posted). A dropped
        connection is not retried: ``chat.postMessage`` may have posted, and would post twice.
        With OAuth it has no token: each request brings its installation's."""
        if self.oauth is not None:
            return self.oauth.web_client()
        return WebClient(
            token=self.bot_token,
            base_url=self.api_url,
            timeout=TIMEOUT_SEC,
            retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2)],
        )
