"""The Discord objects every gateway payload is built of, in the shapes Discord documents: a
user, a server member, a message. ``tests/bot/discord/payloads.py`` (one named server and its
people) and ``discord_guilds.py`` (numbered servers for the local gateway) both build theirs
from these."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tests.servers.discord_api import BOT_USER

__all__ = ["member", "message", "user"]


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
