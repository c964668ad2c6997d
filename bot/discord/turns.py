"""Discord messages as turns: which message speaks to the bot, in which channel or thread
(each is a session), saying what. Where the bot listens is configurable: some channels (by id
or name; a thread counts with its parent) or all it can read, and there every message or
only those that mention it. A direct message is always a turn."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import discord

__all__ = [
    "PLATFORM",
    "SESSION",
    "Listen",
    "Listening",
    "channel_of",
    "replies",
    "session_id",
    "turn_text",
]

PLATFORM = "discord"
MAX_TEXT = 4000
SESSION = re.compile(r"^discord:[0-9]{1,20}$")  # a channel's or a thread's id
_PEOPLE_SAY = {discord.MessageType.default, discord.MessageType.reply}


class Listen(StrEnum):
    MENTIONS = "mentions"  # messages that mention the bot
    ALL = "all"  # every message in a listened channel


@dataclass(frozen=True)
class Listening:
    """``channels``: ids or names (``#`` optional); empty means every channel the bot reads."""

    channels: frozenset[str] = field(default_factory=frozenset)
    mode: Listen = Listen.MENTIONS

    @classmethod
    def of(cls, channels: Iterable[str], mode: str) -> Listening:
        """ValueError naming what is wrong."""
        try:
            listen = Listen(mode.strip().lower())
        except ValueError:
            raise ValueError(f"listen mode {mode!r}: use 'mentions' or 'all'") from None
        names = frozenset(c.strip().lstrip("#").lower() for c in channels if c.strip())
        return cls(names, listen)

    def covers(self, channel: Any) -> bool:
        if not self.channels or isinstance(channel, discord.DMChannel):
            return True
        parent = getattr(channel, "parent", None)  # a thread's channel
        return any(self._names(c) & self.channels for c in (channel, parent) if c is not None)

    @staticmethod
    def _names(channel: Any) -> set[str]:
        return {str(channel.id), str(getattr(channel, "name", "") or "").lower()} - {""}


def session_id(channel_id: int) -> str:
    return f"{PLATFORM}:{channel_id}"


def channel_of(session: str) -> int:
    """The channel (or thread) id of a session id this adapter made."""
    return int(session.partition(":")[2])


def turn_text(message: discord.Message, me: discord.abc.User, listening: Listening) -> str | None:
    """What a person says to the bot in ``message``, or None: a bot (this one too), a system
    message, a channel it does not listen in, no mention where one is needed, or nothing left
    once the mention is taken out."""
    if message.author.bot or message.webhook_id is not None or message.type not in _PEOPLE_SAY:
        return None
    direct = message.guild is None
    if not direct and not listening.covers(message.channel):
        return None
    mentioned = any(user.id == me.id for user in message.mentions)
    if not (direct or mentioned or listening.mode is Listen.ALL):
        return None
    text = re.sub(rf"<@!?{me.id}>", "", message.content or "").strip()
    return text[:MAX_TEXT] or None


def replies(message: discord.Message, me: discord.abc.User) -> bool:
    """Whether ``message`` replies to someone: Discord's reply (a reference to another
    message; a forward is none), or a person other than the bot named in it."""
    reference = message.reference
    if reference is not None and reference.type is not discord.MessageReferenceType.forward:
        return True
    return any(user.id != me.id for user in message.mentions)
