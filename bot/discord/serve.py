"""Running the Discord bot: connect (one connection, or one per shard it runs), serve until
interrupted (Ctrl-C or SIGTERM, which close the gateway connections cleanly), and say in one
sentence what Discord refused: the token, the intent, the shard (4010), or one connection for
too many servers (4011: Discord requires sharding past 2,500)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import TYPE_CHECKING

import aiohttp
import discord

from bot.chat.workspaces import Workspaces

from .adapter import DiscordAdapter
from .client import DeliberateClient, GatewayUnreachable, client_for
from .settings import DiscordSettings, use_api_url, use_gateway_url

if TYPE_CHECKING:
    from bot.app import App

__all__ = ["serve"]

log = logging.getLogger("deliberate.discord")
INTENT_HELP = (
    "Discord refused the Message Content intent: switch it on in the Developer Portal, "
    "Bot > Privileged Gateway Intents > Message Content Intent"
)
INVALID_SHARD, SHARDING_REQUIRED = 4010, 4011  # Discord's gateway close codes
SHARDING_HELP = (
    "Discord requires sharding: the bot is in too many servers for one connection (2,500 at "
    "most; close code 4011). Run it sharded, one shard per replica (--shard I/N or "
    "DISCORD_SHARD, every replica with the same N; docs/discord.md)"
)


def serve(app: App, settings: DiscordSettings) -> str | None:
    """None after a clean stop; else what went wrong, as a sentence."""
    use_api_url(settings.api_url)
    use_gateway_url(settings.gateway_url)
    workspaces = Workspaces(app)
    tenants = app.config.tenants.discord
    if not (tenants.servers or tenants.any_server):
        log.warning(
            "discord: no server is set up (tenants.discord.servers in the config, or "
            "any_server): every server will be told it isn't set up for Deliberate"
        )
    adapter = DiscordAdapter(workspaces, settings.listening)
    client = client_for(adapter, guild_id=settings.guild_id, shards=settings.shards)
    try:
        asyncio.run(_run(client, settings.token))
    except KeyboardInterrupt:
        return None
    except discord.LoginFailure:
        return "Discord refused DISCORD_TOKEN (Developer Portal > Bot > Reset Token gives one)"
    except discord.PrivilegedIntentsRequired:
        return INTENT_HELP
    except GatewayUnreachable:
        return f"cannot reach Discord's gateway at {settings.gateway_url}"
    except discord.ConnectionClosed as exc:
        if exc.code == SHARDING_REQUIRED:
            return SHARDING_HELP
        if exc.code == INVALID_SHARD:
            return f"Discord refused the shard {settings.shards} (close code 4010: Invalid shard)"
        return f"cannot run the Discord bot: {exc}"
    except (discord.DiscordException, aiohttp.ClientError, OSError) as exc:
        return f"cannot run the Discord bot: {exc}"
    except AttributeError:
        if client.ws is not None:
            raise
        # discord.py's reconnect path reads the websocket it never had: the first connection
        # to the gateway failed
        return f"cannot reach Discord's gateway at {settings.gateway_url}"
    return None


async def _run(client: DeliberateClient, token: str) -> None:
    with contextlib.suppress(NotImplementedError):  # no signal handlers on Windows
        asyncio.get_running_loop().add_signal_handler(
            signal.SIGTERM, lambda: asyncio.ensure_future(client.close())
        )
    async with client:
        await client.start(token)
