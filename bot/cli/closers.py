"""The worker's closers, from the environment: Discord's with ``DISCORD_TOKEN``; Slack's with
the bot token of the team each message was posted from when the app is one teams install
(``SLACK_CLIENT_ID``: the installations in Redis, ``bot.slack.oauth.bots``), else with
``SLACK_BOT_TOKEN`` (one team). ``SLACK_API_URL`` and ``DISCORD_API_URL`` as the adapters
read them.

Each platform's closer is imported when its variables are set, not before: discord.py and
slack_sdk are most of a second of a worker's start-up, and a worker for one platform, or for
none (rules alone), needs neither."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from bot.proposals.expiry import API_TIMEOUT_SEC, ByPlatform, Closer

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["SLACK_VARIABLES", "closers_from_env"]

SLACK_VARIABLES = ("SLACK_CLIENT_ID", "SLACK_BOT_TOKEN")  # either: Slack's closers


def closers_from_env(env: Mapping[str, str], redis: RedisClient | None = None) -> ByPlatform:
    """The closers the environment has tokens for; with ``SLACK_CLIENT_ID``, Slack's come
    from the installations kept in ``redis``. ValueError when the OAuth variables are
    malformed (as the Slack bot says it), or ``redis`` is missing for them."""
    closers: dict[str, Closer] = {}
    if token := env.get("DISCORD_TOKEN", "").strip():
        from bot.discord.closing import DiscordCloser
        from bot.discord.settings import DEFAULT_API_URL

        api = env.get("DISCORD_API_URL", "").strip() or DEFAULT_API_URL
        closers["discord"] = DiscordCloser(token, api, timeout=API_TIMEOUT_SEC)
    if not any(env.get(name, "").strip() for name in SLACK_VARIABLES):
        return ByPlatform(closers)
    from bot.slack.closing import slack_closers

    return slack_closers(env, closers, redis)
