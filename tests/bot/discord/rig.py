"""The Discord bot as Discord sees it: the real discord.py client, logged in against the local
REST API, with gateway events handed to discord.py's own parsers (what its websocket does
with each dispatch), so messages, clicks and commands take discord.py's whole path:
``Interaction(data=..., state=...)``, the dynamic item's template, the command tree.

    bot = DiscordBot(app, discord_api)
    bot.say("what if we used postgres")
    reply = discord_api.public()[-1]
    bot.click(reply, "ConfirmCurrent", user=SAM)
    bot.click(reply, "EditProposal", user=SAM)  # answered with a modal (interactions.modals)
    bot.submit(reply, "postgres 16", user=SAM)  # which is filled in and sent
"""

from __future__ import annotations

import asyncio
from typing import Any

import discord.http

from bot.app import App
from bot.chat.workspaces import Workspaces
from bot.discord.adapter import DiscordAdapter
from bot.discord.client import DeliberateClient
from bot.discord.settings import use_api_url
from bot.discord.turns import Listening
from core.llm.chat import ChatModel
from tests.bot.discord import payloads
from tests.bot.discord.payloads import ALICE, CHANNEL, GUILD
from tests.servers.discord_api import DiscordServer

__all__ = ["DiscordBot"]


class DiscordBot:
    def __init__(
        self,
        app: App,
        api: DiscordServer,
        *,
        listening: Listening | None = None,
        model: ChatModel | None = None,
    ) -> None:
        self.app, self.api = app, api
        self.loop = asyncio.new_event_loop()
        self._base = discord.http.Route.BASE
        use_api_url(api.api_url)
        self.workspaces = Workspaces(app, model=model, use_env=False)
        self.adapter = DiscordAdapter(self.workspaces, listening or Listening())
        self.client = DeliberateClient(self.adapter, guild_id=int(GUILD))
        self.run(self.client.login(api.token))  # /users/@me, the app, /deliberate synced
        self.dispatch("GUILD_CREATE", payloads.guild_create())

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def close(self) -> None:
        """Log out and stop; again is nothing."""
        if self.loop.is_closed():
            return
        self.run(self._close())
        self.loop.close()
        discord.http.Route.BASE = self._base

    async def _close(self) -> None:
        await self.client.close()
        timers = [t for t in _tasks() if t is not asyncio.current_task()]
        for task in timers:
            task.cancel()
        await asyncio.gather(*timers, return_exceptions=True)

    # --- gateway dispatches --------------------------------------------------------------

    def dispatch(self, *events: tuple[str, dict[str, Any]] | str | dict[str, Any]) -> None:
        """``dispatch("MESSAGE_CREATE", data)``, or several ``(name, data)`` pairs at once
        (handled concurrently, as the gateway's would be); returns when all is done."""
        pairs = [events] if isinstance(events[0], str) else list(events)

        async def feed() -> None:
            for name, data in pairs:  # type: ignore[misc]
                self.client._connection.parsers[name](data)
            await self._idle()

        self.run(feed())

    async def _idle(self, timeout: float = 20.0) -> None:
        """Until every task the dispatches started (and those they started) is done, but
        for the timers discord.py keeps on views sent ephemerally (an interaction's token
        lasts 15 minutes): they do nothing until then."""
        me = asyncio.current_task()
        while True:
            pending = [t for t in _tasks() if t is not me and not _view_timer(t)]
            if not pending:
                return
            _, still = await asyncio.wait(pending, timeout=timeout)
            assert not still, f"{len(still)} tasks still running after {timeout}s: {still}"

    def say(self, text: str, **fields: Any) -> dict[str, Any]:
        data = payloads.message_create(text, **fields)
        self.dispatch("MESSAGE_CREATE", data)
        return data

    def interaction(self, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """An INTERACTION_CREATE, known to the REST API as Discord would know it."""
        message_id = (data.get("message") or {}).get("id")
        self.api.interactions.started(
            data["id"], data["token"], data["channel_id"], message_id, data["type"]
        )
        return ("INTERACTION_CREATE", data)

    def click(
        self,
        message: dict[str, Any],
        action: str,
        *,
        user: str = ALICE,
        custom_id: str | None = None,
    ) -> dict[str, Any]:
        """A click on ``message``'s button for ``action`` (or on ``custom_id``), with the
        message as Discord has it now."""
        current = self.api.message(message["id"])
        chosen = custom_id or payloads.custom_id_of(current, action)
        data = payloads.component(current, chosen, user)
        self.dispatch(self.interaction(data))
        return data

    def submit(
        self,
        message: dict[str, Any],
        typed: str,
        *,
        user: str = ALICE,
        custom_id: str | None = None,
    ) -> dict[str, Any]:
        """The last modal shown (or one with ``custom_id``), opened from ``message``,
        submitted by ``user`` with ``typed`` in its text input."""
        modal = self.api.interactions.modals[-1]
        [text_input] = payloads.text_inputs(modal)
        chosen = custom_id or modal["custom_id"]
        current = self.api.message(message["id"])
        data = payloads.modal_submit(current, chosen, {text_input["custom_id"]: typed}, user)
        self.dispatch(self.interaction(data))
        return data

    def command(self, subcommand: str, *, user: str = ALICE, **options: str) -> dict[str, Any]:
        data = payloads.command(subcommand, user, CHANNEL, **options)
        self.dispatch(self.interaction(data))
        return data


def _tasks(loop: asyncio.AbstractEventLoop | None = None) -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks(loop) if not t.done()]


def _view_timer(task: asyncio.Task[Any]) -> bool:
    return "timeout_task_impl" in getattr(task.get_coro(), "__qualname__", "")
