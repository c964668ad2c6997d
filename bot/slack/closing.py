"""Closing a clicked message: its buttons go, and a line says what the click did. Two people
may click two buttons of one message at once, and an action that asks the model takes
seconds, so each message's lines are kept (``ClickLines``) and every update, made under a
Redis lock per message (Bolt runs listeners in threads, perhaps in several processes), shows
all of them: the last update to land never hides an earlier click."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from redis.exceptions import LockError
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler
from slack_sdk.webhook import WebhookClient

from bot.proposals.click_lines import ClickLines
from bot.proposals.expiry import API_TIMEOUT_SEC, ByPlatform, Closer
from bot.proposals.refs import Install, Shown
from core.recently_used import Recent
from core.state.actor import Actor

from .direct import Owner, send_direct
from .oauth import OAuthConfig
from .oauth.bots import InstalledBots
from .render import closed_blocks, escape, expired_line, mention
from .turns import PLATFORM

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["ClosedMessages", "InstalledClosers", "SlackCloser", "bot_client", "slack_closers"]

log = logging.getLogger("deliberate.slack")
# Slack's answers to a token it no longer takes: its installation is gone, or it expired
REFUSED_TOKEN = frozenset(
    {"invalid_auth", "token_revoked", "token_expired", "account_inactive", "not_authed"}
)


class ClosedMessages:
    def __init__(self, client: RedisClient, workspace: str, slack: WebClient, ttl_sec: int) -> None:
        self.redis = client
        self.lines = ClickLines(client, workspace, ttl_sec)
        self.slack = slack

    def close(self, channel: str, message: dict[str, Any], line: str) -> bool:
        """Update a public message; True once it shows ``line``."""
        ts = str(message.get("ts"))
        message_ref = f"{channel}:{ts}"
        try:
            with self.lines.lock(PLATFORM, message_ref):
                lines = self.lines.add(PLATFORM, message_ref, line)
                self.slack.chat_update(
                    channel=channel,
                    ts=ts,
                    text=str(message.get("text") or ""),
                    blocks=closed_blocks(list(message.get("blocks") or []), lines),
                )
        except (SlackApiError, SlackClientError, OSError, LockError) as error:
            log.warning("cannot update the clicked message %s in %s: %s", ts, channel, error)
            return False
        return True

    def replace_ephemeral(self, response_url: str, line: str) -> None:
        """An ephemeral message cannot be updated with ``chat.update``; its ``response_url``
        replaces it (Slack's own address, from the signed payload)."""
        try:
            response = WebhookClient(response_url).send(
                replace_original=True,
                text=line,
                blocks=closed_blocks([], [line]),
                unfurl_links=False,
                unfurl_media=False,
            )
        except (SlackClientError, OSError) as error:
            log.warning("cannot replace the clicked ephemeral message: %s", error)
            return
        if response.status_code != 200:
            log.warning("cannot replace the clicked ephemeral message: %s", response.body)


class SlackCloser:
    """Closes a message that shows an expired proposal (``bot.proposals.expiry``), with
    ``chat.update``: its buttons gone, its lines below; tells in its thread, posts, and
    writes to a person directly, all with ``client``'s token. ``owner``: whom the token
    speaks for (else ``auth.test`` says, when a direct message first needs it). ``dead``:
    Slack refused the token (revoked, expired, uninstalled)."""

    def __init__(self, client: WebClient, owner: Owner | None = None) -> None:
        self.client = client
        self._owner = owner
        self.dead = False

    def line(self, deadline_ms: int) -> str:
        return expired_line(deadline_ms)

    def edit(self, shown: Shown, lines: list[str]) -> bool:
        try:
            self.client.chat_update(
                channel=shown.channel,
                ts=shown.message,
                text=shown.text,
                blocks=closed_blocks(shown.blocks, lines),
            )
        except (SlackApiError, SlackClientError, OSError) as error:
            return self._failed(f"cannot close the slack message {shown.ref}", error)
        return True

    def tell(self, shown: Shown, who: Actor, text: str) -> bool:
        named = mention(str(who)) if who.platform == PLATFORM else escape(str(who))
        text = f"{named} {escape(text)}"
        try:
            self.client.chat_postMessage(
                channel=shown.channel,
                thread_ts=shown.thread or shown.message,
                text=text,
                unfurl_links=False,
                unfurl_media=False,
            )
        except (SlackApiError, SlackClientError, OSError) as error:
            return self._failed(f"cannot post in the thread of {shown.ref}", error)
        return True

    def post(self, channel: str, reply_to: str | None, whom: list[str], text: str) -> bool:
        named = "".join(f"{mention(f'user:{who}')} " for who in whom)
        try:
            self.client.chat_postMessage(
                channel=channel,
                thread_ts=reply_to,
                text=f"{named}{escape(text)}",
                unfurl_links=False,
                unfurl_media=False,
            )
        except (SlackApiError, SlackClientError, OSError) as error:
            return self._failed(f"cannot post in {channel}", error)
        return True

    def dm(self, shown: Shown, who: Actor, text: str) -> bool:
        """``text`` to ``who`` alone, saying in which channel it was asked: only a person
        of the token's own team (``direct.py``), and not when ``shown`` is in a direct
        message already."""
        if who.platform != PLATFORM:
            log.debug("slack: no direct message to %s: not a Slack user", who)
            return False
        if shown.channel.startswith("D"):
            log.debug("slack: no direct message to %s: asked in a direct message", who)
            return False
        owner = self.owner()
        if owner is None:
            return False
        said = f"{escape(text)} (asked in <#{shown.channel}>)"
        return send_direct(self.client, owner, who.id, said)

    def owner(self) -> Owner | None:
        """Whom the token speaks for; None when Slack cannot say now."""
        if self._owner is None:
            try:
                info = self.client.auth_test()
            except (SlackApiError, SlackClientError, OSError) as error:
                self._failed("cannot tell whose the slack token is", error)
                return None
            org = str(info.get("enterprise_id") or "") or None
            team = None if info.get("is_enterprise_install") else info.get("team_id")
            self._owner = Owner(str(team or "") or None, org)
        return self._owner

    def _failed(self, what: str, error: Exception) -> bool:
        if isinstance(error, SlackApiError):
            cause = error.response.get("error")
            self.dead = self.dead or cause in REFUSED_TOKEN
            log.warning("%s: %s", what, cause)
        else:
            log.warning("%s: %s", what, error)
        return False


def bot_client(token: str, api_url: str) -> WebClient:
    """A Web API client for a bot token that waits out 429s (nothing was posted then)."""
    return WebClient(
        token=token,
        base_url=api_url,
        timeout=API_TIMEOUT_SEC,
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
        if platform != PLATFORM:
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


def slack_closers(
    env: Mapping[str, str], closers: dict[str, Closer], redis: RedisClient | None
) -> ByPlatform:
    """``closers`` with Slack's: by installation with ``SLACK_CLIENT_ID`` (kept in
    ``redis``), else with ``SLACK_BOT_TOKEN``'s one team, else none. ValueError when the OAuth
    variables are malformed (as the Slack bot says it), or ``redis`` is missing for them."""
    oauth = OAuthConfig.from_env(env)
    if oauth is None:
        if token := env.get("SLACK_BOT_TOKEN", "").strip():
            api_url = env.get("SLACK_API_URL", "").strip() or WebClient.BASE_URL
            closers[PLATFORM] = SlackCloser(bot_client(token, api_url))
        return ByPlatform(closers)
    if redis is None:
        raise ValueError("the Slack installations (SLACK_CLIENT_ID) are kept in Redis: none given")
    if env.get("SLACK_BOT_TOKEN", "").strip():
        logging.getLogger("deliberate.shown").warning(  # the worker's logger, as it was
            "SLACK_BOT_TOKEN is ignored: SLACK_CLIENT_ID says teams install the app"
        )
    installed = InstalledBots(oauth, redis, oauth.web_client())
    return InstalledClosers(closers, installed, oauth.api_url)
