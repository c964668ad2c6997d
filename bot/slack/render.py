"""Views as Block Kit: the reply, the candidate on the table, a context line with the mode
and the beats that fired, one with the deadlines the view carries (until when its proposal
may be applied, when a change for a while reverts: in UTC, and in the reader's own time by
Slack's date formatting), and an ``actions`` block of buttons. Text from people and the
model is escaped, so it cannot ping a channel or forge a link."""

from __future__ import annotations

import re
from typing import Any

from bot.chat.break_glass import GLASS_LABEL
from bot.chat.click_outcomes import EXPIRED
from bot.proposals.expiry import expired_sentence
from connectors.slack import escape
from core.deliberation.beats import ActionStyle
from core.deliberation.view import Button, View
from core.time_phrases import utc_text, view_deadlines

from .buttons import action_id, button_value, glass_action_id

__all__ = ["closed_blocks", "escape", "expired_line", "fallback_text", "mention", "view_blocks"]

Block = dict[str, Any]
SECTION_CHARS = 3000  # Slack's limit on a section's text
MAX_BUTTONS = 25  # Slack's limit on an actions block
MAX_BLOCKS = 50  # Slack's limit on a message
CLOSED = "deliberate-closed-"  # block ids of the lines that say what clicks did
_SLACK_USER = re.compile(r"^[UW][A-Z0-9]{2,}$")


def mention(actor: str) -> str:
    """``moderator:U024BE7LH`` as a Slack mention; any other actor as text."""
    ident = actor.partition(":")[2]
    return f"<@{ident}>" if _SLACK_USER.match(ident) else escape(actor)


def fallback_text(view: View) -> str:
    """What notifications and clients without blocks show."""
    return escape(view.text)[:SECTION_CHARS]


def view_blocks(view: View) -> list[Block]:
    blocks = _sections(view.text)
    candidate = view.candidate
    if candidate is not None and view.buttons and candidate.text.strip() not in view.text:
        quoted = _sections(candidate.text, SECTION_CHARS // 4)  # room for the "> " added
        for block in quoted:
            block["text"]["text"] = "> " + block["text"]["text"].replace("\n", "\n> ")
        blocks.extend(quoted)
    if view.nudge:
        blocks.append(_context(f"_{escape(view.nudge)}_"))
    beats = ", ".join(escape(beat) for beat in view.fired) or "none"
    decides = f" · decides `{escape(view.decides)}`" if view.decides and view.buttons else ""
    blocks.append(_context(f"mode: *{view.mode.value}* · beat: {beats}{decides}"))
    deadlines = view_deadlines(view.expires_at, view.lasts_sec, view.reverts_at)
    if deadlines:
        blocks.append(_context("⏳ " + " · ".join(_deadline(*d) for d in deadlines)))
    if view.buttons:
        elements = [
            element
            for n, button in enumerate(view.buttons[:MAX_BUTTONS], 1)
            for element in (
                _button(view.session_id, button, n),
                *_glass(view.session_id, button, n),
            )
        ]
        blocks.append({"type": "actions", "elements": elements[:MAX_BUTTONS]})
    return blocks


def _deadline(phrase: str, ms: int | None) -> str:
    """A deadline in UTC, then in the reader's own time zone, to the second (Slack formats
    it: "Today at 2:30:15 PM"; a client that cannot shows the UTC time again)."""
    if ms is None:
        return escape(phrase)
    fallback = escape(utc_text(ms))
    return f"{escape(phrase)} (<!date^{ms // 1000}^{{date_pretty}} at {{time_secs}}|{fallback}>)"


def expired_line(deadline_ms: int) -> str:
    """The line that closes a message of an expired proposal: its deadline in UTC, and how
    long ago as each reader's Slack counts it ("3 minutes ago"; a client that cannot shows
    the UTC time again)."""
    ago = f"<!date^{deadline_ms // 1000}^{{ago}}|{escape(utc_text(deadline_ms))}>"
    return f"{EXPIRED} {expired_sentence(deadline_ms, ago)}"


def closed_blocks(blocks: list[Block], lines: list[str]) -> list[Block]:
    """A message's blocks after clicks: its buttons gone, and what each click did (mrkdwn),
    in place of the lines an earlier update added."""
    kept = [
        block
        for block in blocks
        if block.get("type") != "actions" and not str(block.get("block_id", "")).startswith(CLOSED)
    ]
    closing = [_context(line) | {"block_id": f"{CLOSED}{n}"} for n, line in enumerate(lines)]
    return [*kept, *closing][-MAX_BLOCKS:]


def _button(session_id: str, button: Button, position: int) -> Block:
    block: Block = {
        "type": "button",
        "action_id": action_id(button, position),
        "text": {"type": "plain_text", "text": button.label, "emoji": True},
        "value": button_value(session_id, button),
    }
    if button.style is not ActionStyle.DEFAULT:
        block["style"] = button.style.value
    if button.confirm:
        block["confirm"] = {
            "title": {"type": "plain_text", "text": "Are you sure?"},
            # plain text, at most 300 characters (labels are at most 75)
            "text": {"type": "plain_text", "text": f"{button.label}: this changes shared state."},
            "confirm": {"type": "plain_text", "text": "Do it"},
            "deny": {"type": "plain_text", "text": "Cancel"},
            "style": "danger",
        }
    return block


def _glass(session_id: str, button: Button, position: int) -> list[Block]:
    """ "Break glass" beside a proposal's Apply, where its key names a role that may: a form
    asks for the reason. A button, not an overflow menu: Slack's reference has asked for two
    options at least in one, and a block Slack refuses loses the whole message."""
    if not button.break_glass:
        return []
    return [
        {
            "type": "button",
            "action_id": glass_action_id(button, position),
            "text": {"type": "plain_text", "text": GLASS_LABEL, "emoji": True},
            "value": button_value(session_id, button),
        }
    ]


def _sections(raw: str, limit: int = SECTION_CHARS) -> list[Block]:
    """``raw`` escaped, in sections Slack accepts; a cut never splits an ``&amp;``."""
    text, chunks = escape(raw or " "), []
    while len(text) > limit:
        cut = limit
        start = text.rfind("&", max(0, cut - 4), cut)  # every "&" left begins an entity
        if start > 0 and text.index(";", start) >= cut:
            cut = start  # the entity goes whole to the next section
        chunks.append(text[:cut])
        text = text[cut:]
    chunks.append(text)
    return [{"type": "section", "text": {"type": "mrkdwn", "text": c}} for c in chunks]


def _context(text: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text[:SECTION_CHARS]}]}
