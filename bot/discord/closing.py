"""Closing a clicked message: its text, then the line of every click on it so far (what was
committed and by whom, who chose what), its buttons greyed out, so that they show what was on
offer and cannot be used. The lines are kept in Redis (``ClickLines``) and the message edited
under a lock per message: two clicks on one message, in this process or in another replica,
each add their line and neither loses the other's."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from typing import Any

import discord
import httpx
from redis.exceptions import RedisError
from redis.lock import Lock

from bot.chat.workspaces import Workspaces
from bot.proposals.click_lines import LOCK_SEC, ClickLines
from bot.proposals.refs import Shown
from connectors.discord_markdown import cut, escape
from core.config.tenants import Tenant
from core.state.actor import Actor

from .direct import send_direct
from .render import MAX_CONTENT, NO_PINGS, closed_content, disabled_buttons, expired_line
from .turns import PLATFORM

__all__ = ["Closing", "DiscordCloser"]

log = logging.getLogger("deliberate.discord")
Interaction = discord.Interaction[Any]
JUMP = "https://discord.com/channels"  # a message's link: JUMP/<server>/<channel>/<message>


class Closing:
    """Closes clicked messages for the adapter (a lock per message, in this process)."""

    def __init__(self, workspaces: Workspaces) -> None:
        self.workspaces = workspaces
        self._locks: weakref.WeakValueDictionary[int, asyncio.Lock] = weakref.WeakValueDictionary()

    async def close(self, interaction: Interaction, tenant: Tenant, line: str) -> bool:
        """Edit the clicked message: its text, the line of every click on it so far, its
        buttons greyed out. True when a public message now says ``line``; a clicked
        ephemeral message (a question) is edited too, and the outcome still goes out."""
        message = interaction.message
        if message is None:
            return False
        if message.flags.ephemeral:  # one person's message: nobody else's click to keep
            await self._edit(interaction, message, [line])
            return False
        ref = f"{interaction.channel_id}:{message.id}"
        clicks = await asyncio.to_thread(self._lines, tenant)  # may touch Redis: off the loop
        # this process's clicks on the message take turns here, without a thread each;
        # then a Redis lock per message, for the bot's other replicas (or a deploy's overlap)
        local = self._locks.setdefault(message.id, asyncio.Lock())
        async with local:
            lock = clicks.lock(PLATFORM, ref)
            try:
                if not await _acquire(lock):
                    log.warning("cannot edit the clicked message %s: its lock stayed taken", ref)
                    return False
                try:
                    lines = await asyncio.to_thread(clicks.add, PLATFORM, ref, line)
                    return await self._edit(interaction, message, lines)
                finally:
                    with contextlib.suppress(RedisError):  # lapsed meanwhile: freed itself
                        await asyncio.to_thread(lock.release)
            except RedisError as error:
                log.warning("cannot edit the clicked message %s: %s", ref, error)
                return False

    async def _edit(
        self, interaction: Interaction, message: discord.Message, lines: list[str]
    ) -> bool:
        try:
            await interaction.edit_original_response(
                content=closed_content(message.content, lines),
                view=disabled_buttons(message),
                allowed_mentions=NO_PINGS,
            )
        except discord.HTTPException as error:
            log.warning("cannot edit the clicked message %s: %s", message.id, error)
            return False
        return True

    def _lines(self, tenant: Tenant) -> ClickLines:
        app = self.workspaces.app(tenant)
        return ClickLines(app.redis, app.store.workspace, app.config.sessions.ttl_sec)


def _within(text: str, limit: int) -> str:
    """``text`` (escaped) cut to ``limit`` characters where a cut changes nothing it shows."""
    return text[: cut(text, limit)]


async def _acquire(lock: Lock) -> bool:
    """``lock``, waited for up to ``LOCK_SEC`` without holding a thread while it waits (a
    blocking acquire in a worker thread would take one per waiting click, and a busy message
    could take them all)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + LOCK_SEC
    while not await asyncio.to_thread(lock.acquire, blocking=False):
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(0.05)  # another replica's edit: a Discord round trip or two
    return True


class DiscordCloser:
    """Closes a message that shows an expired proposal (``bot.proposals.expiry``) through
    Discord's REST API (``PATCH /channels/{channel}/messages/{message}``) with the bot's
    token: the worker has no gateway connection, and needs none to edit a message. Its
    buttons go (they could do nothing more), its lines come below its text."""

    def __init__(self, token: str, api_url: str, *, timeout: float) -> None:
        self.http = httpx.Client(
            base_url=api_url.rstrip("/"),
            headers={"Authorization": f"Bot {token}"},
            timeout=timeout,
        )

    def line(self, deadline_ms: int) -> str:
        return expired_line(deadline_ms)

    def edit(self, shown: Shown, lines: list[str]) -> bool:
        body = {
            "content": closed_content(shown.text, lines),
            "components": [],
            "allowed_mentions": {"parse": []},
        }
        path = f"/channels/{shown.channel}/messages/{shown.message}"
        try:
            answer = self.http.patch(path, json=body)
        except httpx.HTTPError as error:
            log.warning("cannot close the discord message %s: %s", shown.ref, error)
            return False
        if answer.status_code == 404:  # deleted meanwhile: nothing left to close
            return True
        if answer.is_error:
            log.warning("cannot close the discord message %s: %s", shown.ref, answer.text[:200])
            return False
        return True

    def tell(self, shown: Shown, who: Actor, text: str) -> bool:
        """Posted as a reply to ``shown``, pinging ``who`` alone."""
        ours = who.platform == PLATFORM and who.id.isdigit()
        named = f"<@{who.id}>" if ours else escape(str(who))
        inert = escape(text)
        body = {
            "content": _within(f"{named} {inert}", MAX_CONTENT),
            "allowed_mentions": {"parse": [], "users": [who.id] if ours else []},
            "message_reference": {"message_id": shown.message, "fail_if_not_exists": False},
        }
        try:
            answer = self.http.post(f"/channels/{shown.channel}/messages", json=body)
        except httpx.HTTPError as error:
            log.warning("cannot post in the channel of %s: %s", shown.ref, error)
            return False
        if answer.is_error:
            log.warning("cannot post in the channel of %s: %s", shown.ref, answer.text[:200])
            return False
        return True

    def dm(self, shown: Shown, who: Actor, text: str) -> bool:
        """``text`` to ``who`` alone, with a link to the message that showed it: only a
        member of the server it was shown in (``direct.py``), never from a DM."""
        if who.platform != PLATFORM:
            log.debug("discord: no direct message to %s: not a Discord user", who)
            return False
        if shown.team is None:
            log.debug("discord: no direct message to %s: shown in a DM, or server unknown", who)
            return False
        inert = escape(text)
        link = f"{JUMP}/{shown.team}/{shown.channel}/{shown.message}"
        content = f"{_within(inert, MAX_CONTENT - len(link) - 3)} ({link})"
        return send_direct(self.http, shown.team, who.id, content)

    def post(self, channel: str, reply_to: str | None, whom: list[str], text: str) -> bool:
        """Posted in ``channel`` (as a reply to ``reply_to``), pinging ``whom`` alone."""
        users = [who for who in whom if who.isdigit()]
        named = "".join(f"<@{who}> " for who in users)
        inert = escape(text)
        body: dict[str, Any] = {
            "content": _within(f"{named}{inert}", MAX_CONTENT),
            "allowed_mentions": {"parse": [], "users": users},
        }
        if reply_to is not None:
            body["message_reference"] = {"message_id": reply_to, "fail_if_not_exists": False}
        try:
            answer = self.http.post(f"/channels/{channel}/messages", json=body)
        except httpx.HTTPError as error:
            log.warning("cannot post in the discord channel %s: %s", channel, error)
            return False
        if answer.is_error:
            log.warning("cannot post in the discord channel %s: %s", channel, answer.text[:200])
            return False
        return True
