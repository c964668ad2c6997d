"""The Slack adapter's settings, from the environment: ``SLACK_BOT_TOKEN`` always;
``SLACK_APP_TOKEN`` for Socket Mode, else ``SLACK_SIGNING_SECRET`` for HTTP mode;
``SLACK_API_URL`` to reach the Web API somewhere else (a proxy, a test server)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

__all__ = ["SlackSettings"]

TIMEOUT_SEC = 10


@dataclass(frozen=True)
class SlackSettings:
    bot_token: str
    signing_secret: str = ""
    app_token: str = ""
    api_url: str = WebClient.BASE_URL

    @property
    def socket_mode(self) -> bool:
        return bool(self.app_token)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SlackSettings:
        """ValueError naming what is missing or malformed."""
        bot_token = env.get("SLACK_BOT_TOKEN", "").strip()
        app_token = env.get("SLACK_APP_TOKEN", "").strip()
        secret = env.get("SLACK_SIGNING_SECRET", "").strip()
        if not bot_token:
            raise ValueError("SLACK_BOT_TOKEN is not set: the bot token (xoxb-…) of the Slack app")
        if app_token and not app_token.startswith("xapp-"):
            raise ValueError("SLACK_APP_TOKEN must be an app-level token (xapp-…)")
        if not app_token and not secret:
            raise ValueError(
                "set SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP mode): "
                "without either, Slack's requests cannot be received safely"
            )
        # slack_sdk joins method names onto the base URL, so it must end with a slash
        api_url = env.get("SLACK_API_URL", "").strip() or WebClient.BASE_URL
        return cls(bot_token, secret, app_token, api_url.rstrip("/") + "/")

    def web_client(self) -> WebClient:
        """A client that waits out 429s (``Retry-After``: nothing was posted). A dropped
        connection is not retried: ``chat.postMessage`` may have posted, and would post twice."""
        return WebClient(
            token=self.bot_token,
            base_url=self.api_url,
            timeout=TIMEOUT_SEC,
            retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2)],
        )
