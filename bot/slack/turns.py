"""Slack messages as turns: which message is a person speaking to the bot, in which thread
(a thread is a session), saying what."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["SESSION", "Said", "read_said", "session_id", "thread_of"]

PLATFORM = "slack"
MAX_TEXT = 4000
# a person's message; edits, deletions, joins and other bots' posts come with other subtypes
_PERSON_SUBTYPES = {None, "thread_broadcast", "file_share"}
SESSION = re.compile(r"^slack:[A-Z0-9]{1,40}:[0-9]{1,20}\.[0-9]{1,10}$")  # channel, thread ts


@dataclass(frozen=True)
class Said:
    channel: str
    ts: str
    thread_ts: str  # the thread's root: the message's own ts when it starts the thread
    user: str
    text: str
    direct: bool  # a direct message to the bot
    # it replies to someone: in a thread another person started, or naming a person
    replying: bool = False

    @property
    def session_id(self) -> str:
        return session_id(self.channel, self.thread_ts)


def session_id(channel: str, thread_ts: str) -> str:
    return f"{PLATFORM}:{channel}:{thread_ts}"


def thread_of(session: str) -> tuple[str, str]:
    """(channel, thread ts) of a session id this adapter made."""
    _, channel, thread_ts = session.split(":", 2)
    return channel, thread_ts


_PERSON = re.compile(r"<@[UW][A-Z0-9]+(\|[^>]*)?>")  # a person named (the bot's mention is out)


def read_said(event: dict[str, Any], bot_user_id: str | None) -> Said | None:
    """The person's message in ``event``, or None: the bot itself, another bot, an edit, a
    join, or nothing left to say once the mention is taken out."""
    if event.get("bot_id") or event.get("subtype") not in _PERSON_SUBTYPES:
        return None
    user, channel, ts = event.get("user"), event.get("channel"), event.get("ts")
    if not (isinstance(user, str) and isinstance(channel, str) and isinstance(ts, str)):
        return None
    if user == bot_user_id:
        return None
    text = str(event.get("text") or "")
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>", "", text)
    # a person named: Slack's own mark, before what was typed as "<@U...>" is unescaped
    named = _PERSON.search(text) is not None
    # Slack escapes these three in message text; the model should read what was typed
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    text = text.strip()[:MAX_TEXT]
    if not text:
        return None
    thread_ts = str(event.get("thread_ts") or ts)
    direct = event.get("channel_type") == "im"
    parent = event.get("parent_user_id")
    replying = (isinstance(parent, str) and parent != user) or named
    return Said(channel, ts, thread_ts, user, text, direct, replying)
