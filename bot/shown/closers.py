"""The worker's closers, from the environment: Discord's with ``DISCORD_TOKEN``; Slack's with
the bot token of the team each message was posted from when the app is one teams install
(``SLACK_CLIENT_ID``: the installations in Redis, ``bot.slack.oauth.bots``), else with
``SLACK_BOT_TOKEN`` (one team). ``SLACK_API_URL`` and ``DISCORD_API_URL`` as the adapters
read them."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

from bot.discord.closing import DiscordCloser
from bot.discord.settings import DEFAULT_API_URL
from bot.slack.closing import SlackCloser
from bot.slack.direct import Owner
from bot.slack.oauth import OAuthConfig
from bot.slack.oauth.bots import InstalledBots
from bot.workspaces import Recent

from .expiry import ByPlatform, Closer
from .refs import Install

if TYPE_CHECKING:
    from core.redis_client import RedisClient

__all__ = ["InstalledClosers", "bot_client", "closers_from_env"]

TIMEOUT_SEC = 10
SLACK = "slack"
log = logging.getLogger("deliberate.shown")


def bot_client(token: str, api_url: str) -> WebClient:
    """A Web API client for a bot token that waits out 429s (nothing was posted then)."""
    return WebClient(
        token=token,
        base_url=api_url,
        timeout=TIMEOUT_SEC,
        retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2)],
    )


class InstalledClosers(ByPlatform):
    """Slack's closers by installation: the token of a message's team (or org) is looked
    up in ``installed`` at each use (it may rotate, or be revoked), and one closer is kept
    per token. A token Slack refuses is forgotten, and its team skipped from then on."""

    def __init__(
        self, closers: Mapping[str, Closer], installed: InstalledBots, api_url: str
    ) -> None:
        super().__init__(closers)
        self.installed = installed
        self.api_url = api_url
        self._by_token: Recent[SlackCloser] = Recent()

    def at(self, platform: str, install: Install | None) -> Closer | None:
        if platform != SLACK:
            return super().at(platform, install)
        install = install or Install()
        found = self.installed.find(install)
        if found is None:
            return None
        closer = self._by_token.get(found.token)
        if closer is None:
            owner = Owner(found.team, found.enterprise)
            closer = SlackCloser(bot_client(found.token, self.api_url), owner)
            self._by_token.put(found.token, closer)
        if closer.dead:
            self.installed.forget(install, found.token)
            return None
        return closer


def closers_from_env(env: Mapping[str, str], redis: RedisClient | None = None) -> ByPlatform:
    """The closers the environment has tokens for; with ``SLACK_CLIENT_ID``, Slack's come
    from the installations kept in ``redis``. ValueError when the OAuth variables are
    malformed (as the Slack bot says it), or ``redis`` is missing for them."""
    closers: dict[str, Closer] = {}
    if token := env.get("DISCORD_TOKEN", "").strip():
        api = env.get("DISCORD_API_URL", "").strip() or DEFAULT_API_URL
        closers["discord"] = DiscordCloser(token, api, timeout=TIMEOUT_SEC)
    oauth = OAuthConfig.from_env(env)
    if oauth is None:
        if token := env.get("SLACK_BOT_TOKEN", "").strip():
            api_url = env.get("SLACK_API_URL", "").strip() or WebClient.BASE_URL
            closers[SLACK] = SlackCloser(bot_client(token, api_url))
        return ByPlatform(closers)
    if redis is None:
        raise ValueError("the Slack installations (SLACK_CLIENT_ID) are kept in Redis: none given")
    if env.get("SLACK_BOT_TOKEN", "").strip():
        log.warning("SLACK_BOT_TOKEN is ignored: SLACK_CLIENT_ID says teams install the app")
    installed = InstalledBots(oauth, redis, oauth.web_client())
    return InstalledClosers(closers, installed, oauth.api_url)
