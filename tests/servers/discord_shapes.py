"""The Discord objects every gateway payload is built of, in the shapes Discord documents: a
server (GUILD_CREATE) with its roles and channels, a user, a server member, a message.
``tests/bot/discord/payloads.py`` (one named server and its people) and
``discord_guilds.py`` (numbered servers for the local gateway) both build theirs from
these."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tests.servers.discord_api import BOT_USER

__all__ = ["channel", "guild", "member", "message", "role", "user"]


def user(user_id: str, username: str) -> dict[str, Any]:
    return {
        "id": user_id,
        "username": username,
        "discriminator": "0",
        "global_name": None,
        "avatar": None,
    }


def member(roles: list[str]) -> dict[str, Any]:
    """A server member without its ``user`` (MESSAGE_CREATE's ``member`` has none)."""
    return {
        "roles": roles,
        "joined_at": "2026-01-01T00:00:00+00:00",
        "deaf": False,
        "mute": False,
        "flags": 0,
        "nick": None,
        "avatar": None,
        "premium_since": None,
        "pending": False,
        "communication_disabled_until": None,
    }


def message(
    message_id: str, channel: str, author: dict[str, Any], content: str, *, mentions_bot: bool
) -> dict[str, Any]:
    """A MESSAGE_CREATE's message, without ``guild_id`` and ``member`` (a DM has neither)."""
    return {
        "id": message_id,
        "channel_id": channel,
        "author": author,
        "content": content,
        "timestamp": datetime.now(UTC).isoformat(),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [BOT_USER] if mentions_bot else [],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "components": [],
        "pinned": False,
        "type": 0,
        "flags": 0,
    }


def role(role_id: str, name: str, position: int, permissions: int) -> dict[str, Any]:
    return {
        "id": role_id,
        "name": name,
        "color": 0,
        "hoist": False,
        "position": position,
        "permissions": str(permissions),
        "managed": False,
        "mentionable": False,
        "flags": 0,
    }


def channel(channel_id: str, guild_id: str, name: str, position: int) -> dict[str, Any]:
    """A server's text channel."""
    return {
        "id": channel_id,
        "type": 0,
        "guild_id": guild_id,
        "name": name,
        "position": position,
        "permission_overwrites": [],
        "nsfw": False,
        "topic": None,
        "last_message_id": None,
        "rate_limit_per_user": 0,
        "parent_id": None,
    }


def guild(
    guild_id: str,
    name: str,
    owner: str,
    *,
    roles: list[dict[str, Any]],
    channels: list[dict[str, Any]],
    threads: list[dict[str, Any]],
    member_count: int,
) -> dict[str, Any]:
    """A GUILD_CREATE's server, as the gateway announces one the bot is in."""
    return {
        "id": guild_id,
        "name": name,
        "icon": None,
        "owner_id": owner,
        "roles": roles,
        "channels": channels,
        "threads": threads,
        "members": [],
        "emojis": [],
        "stickers": [],
        "features": [],
        "member_count": member_count,
        "large": False,
        "unavailable": False,
        "joined_at": "2026-01-01T00:00:00+00:00",
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "mfa_level": 0,
        "premium_tier": 0,
        "preferred_locale": "en-US",
        "nsfw_level": 0,
    }
