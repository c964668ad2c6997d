"""The discord.py client: the intents the bot needs, our buttons registered as dynamic items
(so buttons sent before a restart still work), ``/deliberate`` in its command tree, and the
gateway's messages and submitted forms handed to the adapter."""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands

from bot.notices import UNCHANGED

from .adapter import DiscordAdapter
from .buttons import PREFIX, TEMPLATE, DeliberateButton
from .commands import deliberate_commands
from .render import NO_PINGS

__all__ = ["DeliberateClient", "intents"]

log = logging.getLogger("deliberate.discord")


def intents() -> discord.Intents:
    """Servers and their channels, messages in them and in DMs, and what those messages say
    (Message Content is privileged: it must be switched on in the Developer Portal)."""
    wanted = discord.Intents.none()
    wanted.guilds = True
    wanted.guild_messages = True
    wanted.dm_messages = True
    wanted.message_content = True
    return wanted


class DeliberateClient(discord.Client):
    """``guild_id``: sync ``/deliberate`` to that server only (it shows at once there),
    else globally; ``sync=False`` leaves Discord's registered commands as they are."""

    def __init__(
        self, adapter: DiscordAdapter, *, guild_id: int | None = None, sync: bool = True
    ) -> None:
        super().__init__(intents=intents(), allowed_mentions=NO_PINGS)
        self.adapter = adapter
        self.guild_id, self.sync = guild_id, sync
        self.tree = app_commands.CommandTree(self)
        self.tree.add_command(deliberate_commands(adapter.on_command, adapter.on_session))

    async def setup_hook(self) -> None:
        self.add_dynamic_items(DeliberateButton)
        if not self.sync:
            return
        guild = discord.Object(self.guild_id) if self.guild_id else None
        if guild is not None:
            self.tree.copy_global_to(guild=guild)
        synced = await self.tree.sync(guild=guild)
        log.info("discord: synced %s to %s", [c.name for c in synced], guild or "every server")

    async def on_ready(self) -> None:
        log.info("discord: connected as %s to %d servers", self.user, len(self.guilds))

    async def on_message(self, message: discord.Message) -> None:
        if self.user is not None:
            await self.adapter.on_message(message, self.user)

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        """A submitted form (every modal the bot shows is one; the adapter reads it from its
        custom_id, whatever process opened it). And a click on something shaped like our
        button but not matching its template (an old format, a forged id), which would
        otherwise fail without a word."""
        if interaction.type is discord.InteractionType.modal_submit:
            return await self.adapter.on_form(interaction)
        data: dict[str, Any] = dict(interaction.data or {})
        custom_id = str(data.get("custom_id") or "")
        if interaction.type is not discord.InteractionType.component:
            return
        if custom_id.startswith(PREFIX) and TEMPLATE.fullmatch(custom_id) is None:
            await interaction.response.send_message(
                "This button is not one Deliberate made" + UNCHANGED, ephemeral=True
            )
