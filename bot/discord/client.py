"""The discord.py client: the intents the bot needs, our buttons registered as dynamic items
(so buttons sent before a restart still work), ``/deliberate`` in its command tree, and the
gateway's messages and submitted forms handed to the adapter. Sharded (``shards``), a process
runs one shard (discord.py's Client with its shard_id and shard_count) or several
(``DeliberateShards``: its AutoShardedClient, a connection each, one event loop), and sees the
servers of those shards alone; nothing here needs to see every server."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from bot.chat.notices import UNCHANGED

from .adapter import DiscordAdapter
from .buttons import PREFIX, TEMPLATE, DeliberateButton
from .commands import deliberate_commands
from .render import NO_PINGS
from .shards import Shards

if TYPE_CHECKING:
    import yarl

__all__ = ["DeliberateClient", "DeliberateShards", "GatewayUnreachable", "client_for", "intents"]

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
    else globally; ``sync=False`` leaves Discord's registered commands as they are, and so
    does a process that does not run shard 0 (one registration for the whole bot, not one
    per replica: it is global, and Discord rate-limits it). ``shards``: the shards it
    runs, None for one connection that gets every server."""

    def __init__(
        self,
        adapter: DiscordAdapter,
        *,
        guild_id: int | None = None,
        sync: bool = True,
        shards: Shards | None = None,
    ) -> None:
        super().__init__(intents=intents(), allowed_mentions=NO_PINGS, **self._sharding(shards))
        self.adapter = adapter
        self.guild_id, self.running = guild_id, shards
        self.sync = sync and (shards is None or shards.first)
        self.tree = app_commands.CommandTree(self)
        self.tree.add_command(deliberate_commands(adapter.on_command, adapter.on_session))

    def _sharding(self, shards: Shards | None) -> dict[str, Any]:
        """discord.py's options for ``shards``: a Client takes one shard_id."""
        if shards is None:
            return {}
        if len(shards.ids) != 1:
            raise ValueError(f"one shard to a DeliberateClient, not {shards}: DeliberateShards")
        return {"shard_id": shards.ids[0], "shard_count": shards.count}

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
        shards = f" (shards {self.running})" if self.running else ""
        log.info("discord: connected as %s to %d servers%s", self.user, len(self.guilds), shards)

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


class DeliberateShards(DeliberateClient, discord.AutoShardedClient):
    """Several shards in one process: discord.py's AutoShardedClient, told which."""

    def __init__(self, adapter: DiscordAdapter, **options: Any) -> None:
        super().__init__(adapter, **options)
        self._launching: set[int] = set()  # shards whose first connection is being made

    def _sharding(self, shards: Shards | None) -> dict[str, Any]:
        if shards is None:
            raise ValueError("DeliberateShards runs the shards it is given")
        return {"shard_ids": list(shards.ids), "shard_count": shards.count}

    async def launch_shard(
        self, gateway: yarl.URL, shard_id: int, *, initial: bool = False
    ) -> None:
        """discord.py retries a shard whose first connection failed every 5 s, for ever, by
        calling this again; the process stops instead (``GatewayUnreachable``), as one
        shard's does. A connection lost later is still resumed by discord.py."""
        if shard_id in self._launching:
            raise GatewayUnreachable(shard_id)
        self._launching.add(shard_id)
        try:
            await super().launch_shard(gateway, shard_id, initial=initial)
        finally:
            self._launching.discard(shard_id)


class GatewayUnreachable(discord.DiscordException):
    """A shard's first connection to the gateway failed."""

    def __init__(self, shard_id: int) -> None:
        super().__init__(f"shard {shard_id} could not connect")
        self.shard_id = shard_id


def client_for(
    adapter: DiscordAdapter, *, guild_id: int | None = None, shards: Shards | None = None
) -> DeliberateClient:
    """The client that runs ``shards``: one connection, or one per shard."""
    if shards is not None and len(shards.ids) > 1:
        return DeliberateShards(adapter, guild_id=guild_id, shards=shards)
    return DeliberateClient(adapter, guild_id=guild_id, shards=shards)
