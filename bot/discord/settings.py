"""The Discord adapter's settings, from the environment: ``DISCORD_TOKEN`` always;
``DISCORD_CHANNELS`` (ids or names, comma-separated; unset: every channel the bot can read)
and ``DISCORD_LISTEN`` (``mentions``, the default, or ``all``) for where it takes turns;
``DISCORD_GUILD_ID`` to register ``/deliberate`` on one server at once rather than globally;
``DISCORD_SHARD`` for the shards this process runs (``I/N``, or ``I,J/N``: ``shards``; unset:
one connection for every server); ``DISCORD_API_URL`` and ``DISCORD_GATEWAY_URL`` to reach the
REST API and the gateway somewhere else (a proxy, a test server)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import discord.gateway
import discord.http
import yarl

from .shards import Shards
from .turns import Listening

__all__ = ["DEFAULT_API_URL", "DiscordSettings", "use_api_url", "use_gateway_url"]

DEFAULT_API_URL = "https://discord.com/api/v10"
DEFAULT_GATEWAY_URL = "wss://gateway.discord.gg/"


@dataclass(frozen=True)
class DiscordSettings:
    token: str
    listening: Listening = field(default_factory=Listening)
    guild_id: int | None = None
    api_url: str = DEFAULT_API_URL
    gateway_url: str = DEFAULT_GATEWAY_URL
    shards: Shards | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> DiscordSettings:
        """ValueError naming what is missing or malformed."""
        token = env.get("DISCORD_TOKEN", "").strip()
        if not token:
            raise ValueError(
                "DISCORD_TOKEN is not set: the bot token from the Developer Portal (Bot page)"
            )
        try:
            listening = Listening.of(
                env.get("DISCORD_CHANNELS", "").split(","), env.get("DISCORD_LISTEN", "mentions")
            )
        except ValueError as exc:
            raise ValueError(f"DISCORD_LISTEN: {exc}") from None
        guild = env.get("DISCORD_GUILD_ID", "").strip()
        if guild and not (guild.isascii() and guild.isdigit()):
            raise ValueError(f"DISCORD_GUILD_ID {guild!r} is not a server id (digits)")
        api_url = env.get("DISCORD_API_URL", "").strip().rstrip("/") or DEFAULT_API_URL
        gateway_url = env.get("DISCORD_GATEWAY_URL", "").strip() or DEFAULT_GATEWAY_URL
        shard = env.get("DISCORD_SHARD", "").strip()
        try:
            shards = Shards.parse(shard) if shard else None
        except ValueError as exc:
            raise ValueError(f"DISCORD_SHARD: {exc}") from None
        guild_id = int(guild) if guild else None
        return cls(token, listening, guild_id, api_url, gateway_url, shards)


def use_api_url(url: str) -> None:
    """discord.py builds every REST URL (its own calls and interaction responses) from one
    class attribute; this process talks to one Discord."""
    discord.http.Route.BASE = url.rstrip("/")


def use_gateway_url(url: str) -> None:
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(url)
