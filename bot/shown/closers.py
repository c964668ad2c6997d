"""The worker's closers: one per platform the environment has a bot token for."""

from __future__ import annotations

from collections.abc import Mapping

from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

from bot.discord.closing import DiscordCloser
from bot.discord.settings import DEFAULT_API_URL
from bot.slack.closing import SlackCloser

from .expiry import Closer

__all__ = ["closers_from_env"]

TIMEOUT_SEC = 10


def closers_from_env(env: Mapping[str, str]) -> dict[str, Closer]:
    """The closers the environment has tokens for (``SLACK_BOT_TOKEN``, ``DISCORD_TOKEN``;
    ``SLACK_API_URL``, ``DISCORD_API_URL`` as the adapters read them). An app that teams
    install (OAuth) has no one token: its messages are closed by clicks alone."""
    closers: dict[str, Closer] = {}
    if token := env.get("SLACK_BOT_TOKEN", "").strip():
        client = WebClient(
            token=token,
            base_url=env.get("SLACK_API_URL", "").strip() or WebClient.BASE_URL,
            timeout=TIMEOUT_SEC,
            retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2)],
        )
        closers["slack"] = SlackCloser(client)
    if token := env.get("DISCORD_TOKEN", "").strip():
        api = env.get("DISCORD_API_URL", "").strip() or DEFAULT_API_URL
        closers["discord"] = DiscordCloser(token, api, timeout=TIMEOUT_SEC)
    return closers
