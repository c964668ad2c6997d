"""Numbered Discord servers as the local gateway (``discord_gateway``) announces them, and what
their people send, in the shapes Discord documents: server ``n`` has one channel,
#deliberation, where everyone may read, write and use app commands; its people are
``person(n, who)``. Server ids are snowflakes ``1 << 22`` apart, so that consecutive servers
fall on different shards (Discord's ``(id >> 22) % N``), as real ones spread.

    guilds = [guild_create(n) for n in range(4)]
    said = message_create(2, "what if we used postgres")     # mentions the bot
    dm = direct_message(7, "what if we used postgres")       # a DM: no server
    data = click(2, answer, custom_id)                        # a button of the bot's answer
"""

from __future__ import annotations

import itertools
from typing import Any

import discord

from tests.servers import discord_shapes as shapes
from tests.servers.discord_api import BOT_ID

__all__ = [
    "EVERYONE",
    "channel_of",
    "click",
    "direct_message",
    "dm_channel_of",
    "guild_create",
    "guild_id",
    "message_create",
    "person",
    "user",
]

EVERYONE = discord.Permissions(
    view_channel=True, send_messages=True, read_message_history=True, use_application_commands=True
)
FIRST_GUILD = 1_300_000_000_000_000_000
_snowflakes = itertools.count(1_500_000_000_000_000_000)


def guild_id(n: int) -> str:
    return str(FIRST_GUILD + (n << 22))


def channel_of(guild: str) -> str:
    return str(int(guild) + 10)


def person(n: int, who: int = 1) -> str:
    return str(1_400_000_000_000_000_000 + 10 * n + who)


def dm_channel_of(user_id: str) -> str:
    """The direct message channel between the bot and ``user_id``."""
    return str(int(user_id) + 200_000_000_000_000_000)


def guild_create(n: int) -> dict[str, Any]:
    guild = guild_id(n)
    return shapes.guild(
        guild,
        f"Server {n}",
        person(n, 9),
        roles=[shapes.role(guild, "@everyone", 0, EVERYONE.value)],
        channels=[shapes.channel(channel_of(guild), guild, "deliberation", 0)],
        threads=[],
        member_count=3,
    )


def user(user_id: str) -> dict[str, Any]:
    return shapes.user(user_id, f"u{user_id[-6:]}")


def _message(channel: str, author: str, content: str, mentions: bool) -> dict[str, Any]:
    return shapes.message(
        str(next(_snowflakes)), channel, user(author), content, mentions_bot=mentions
    )


def message_create(n: int, text: str, *, mention: bool = True) -> dict[str, Any]:
    """A message in server ``n``'s #deliberation by its first person, mentioning the bot or
    not."""
    guild, author = guild_id(n), person(n)
    content = f"<@{BOT_ID}> {text}" if mention else text
    said = _message(channel_of(guild), author, content, mention)
    return said | {"guild_id": guild, "member": shapes.member([])}


def direct_message(n: int, text: str) -> dict[str, Any]:
    """A direct message to the bot from ``person(n)``: no server, so no ``guild_id``."""
    author = person(n)
    return _message(dm_channel_of(author), author, text, False)


def click(n: int, message: dict[str, Any], custom_id: str) -> dict[str, Any]:
    guild, clicker = guild_id(n), person(n)
    interaction = str(next(_snowflakes))
    channel = guild_create(n)["channels"][0]
    return {
        "id": interaction,
        "application_id": BOT_ID,
        "type": 3,
        "token": f"interaction-token-{interaction}",
        "version": 1,
        "guild_id": guild,
        "guild_locale": "en-US",
        "channel_id": channel["id"],
        "channel": channel,
        "context": 0,
        "locale": "en-US",
        "entitlements": [],
        "attachment_size_limit": 10 * 1024 * 1024,
        "app_permissions": str(discord.Permissions.text().value),
        "member": shapes.member([]) | {"user": user(clicker), "permissions": str(EVERYONE.value)},
        "authorizing_integration_owners": {"0": guild},
        "message": message,
        "data": {"custom_id": custom_id, "component_type": 2},
    }
