"""Words that ask something of the session rather than say something in it, as people type
them to the bot on Slack and Discord: ``show`` shows what is on the table and its buttons (to
the asker alone), and ``topic: NAME`` (or ``/topic NAME``) names what the session decides.
Anything else is a turn. The console has the same as ``/show`` and ``/topic``."""

from __future__ import annotations

import re

from core.deliberation.messages import ShowRequested, TopicSet
from core.deliberation.topics import MAX_TOPIC
from core.state.actor import Actor

__all__ = ["request_of"]

_SHOW = re.compile(r"/?show[.!?]?", re.IGNORECASE)
_TOPIC = re.compile(r"(?:/topic\s+|topic\s*:\s*)(?P<name>\S.*)", re.IGNORECASE | re.DOTALL)


def request_of(text: str, actor: Actor) -> ShowRequested | TopicSet | None:
    """The request ``text`` makes of the session, or None when it is a turn."""
    said = " ".join(text.split())
    if _SHOW.fullmatch(said):
        return ShowRequested(actor=actor)
    found = _TOPIC.fullmatch(said)
    if found is not None:  # a name past the limit is cut to it: the notice shows what was kept
        return TopicSet(topic=found["name"][:MAX_TOPIC].strip(), actor=actor)
    return None
