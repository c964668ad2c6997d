"""Views as Discord messages: the text (in as many messages of at most 2000 characters as it
takes), the candidate as a quote, the nudge, a small line with the mode and the beats that
fired, one with the deadlines the view carries (until when its proposal may be applied, when
a change for a while reverts: in UTC, and how far off, which Discord keeps counting), and the
buttons, five to a row, on the last message. Nothing in them can ping anyone: every message
goes out with no allowed mentions. The text, the candidate and the nudge are people's words
or the model's, shown as they were written (``connectors.discord_markdown``): no masked
link, header, quote, spoiler or timestamp in them is rendered, and a message is never cut
between a backslash and the character it escapes."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import discord

from bot.chat.break_glass import GLASS_LABEL
from bot.chat.click_outcomes import EXPIRED
from bot.proposals.expiry import expired_sentence
from connectors.discord_markdown import cut, escape
from core.deliberation.beats import ActionStyle
from core.deliberation.view import Button, View
from core.time_phrases import view_deadlines

from .buttons import TEMPLATE, DeliberateButton, custom_id, glass_id

__all__ = [
    "NO_PINGS",
    "Rendered",
    "closed_content",
    "disabled_buttons",
    "expired_line",
    "render",
]

log = logging.getLogger("deliberate.discord")
MAX_CONTENT = 2000
PER_ROW, MAX_ROWS = 5, 5
NO_PINGS = discord.AllowedMentions.none()
STYLES = {
    ActionStyle.DEFAULT: discord.ButtonStyle.secondary,
    ActionStyle.PRIMARY: discord.ButtonStyle.primary,
    ActionStyle.DANGER: discord.ButtonStyle.danger,
}
# what separates a closed message's own text from the lines its clicks added
CLOSED = "\n-# ─────\n"


@dataclass(frozen=True)
class Rendered:
    content: str
    buttons: discord.ui.View | None = None


def render(view: View) -> list[Rendered]:
    """The messages that show ``view``, buttons on the last."""
    parts = [escape(view.text.strip()) or "…"]
    candidate = view.candidate
    if candidate is not None and view.buttons and candidate.text.strip() not in view.text:
        lines = candidate.text.splitlines() or [""]
        parts.append("\n".join(f"> {escape(line)}" for line in lines))
    nudge = [line.strip() for line in (view.nudge or "").splitlines() if line.strip()]
    if nudge:  # in italics, line by line (a "*" does not reach over a line's end)
        parts.append("\n".join(f"*{escape(line)}*" for line in nudge))
    beats = ", ".join(escape(beat) for beat in view.fired) or "none"
    decides = f" · decides `{view.decides}`" if view.decides and view.buttons else ""
    parts.append(f"-# mode: {view.mode.value} · beat: {beats}{decides}")
    deadlines = view_deadlines(view.expires_at, view.lasts_sec, view.reverts_at)
    if deadlines:
        parts.append("-# ⏳ " + " · ".join(_deadline(*d) for d in deadlines))
    chunks = _split("\n".join(parts))
    buttons = _buttons(view.session_id, view.buttons)
    return [Rendered(c) for c in chunks[:-1]] + [Rendered(chunks[-1], buttons)]


def _deadline(phrase: str, ms: int | None) -> str:
    """A deadline in UTC, then how far off it is (``<t:…:R>``: each reader's client counts
    it, "in 25 minutes", then "3 minutes ago")."""
    return phrase if ms is None else f"{phrase} (<t:{ms // 1000}:R>)"


def expired_line(deadline_ms: int) -> str:
    """The line that closes a message of an expired proposal: its deadline in UTC, and how
    long ago as each reader's Discord counts it (``<t:…:R>``, "3 minutes ago")."""
    return f"{EXPIRED} {expired_sentence(deadline_ms, f'<t:{deadline_ms // 1000}:R>')}"


def _buttons(session: str, buttons: list[Button]) -> discord.ui.View | None:
    """Five to a row; a button whose identification does not fit a custom_id is left out
    (and logged) rather than failing the message."""
    items, seen = discord.ui.View(timeout=None), set[str]()
    for button in buttons:
        try:
            cid = custom_id(session, button, ask=button.confirm)
        except ValueError as exc:
            log.error("button %s left out: %s", button.action, exc)
            continue
        if cid in seen or len(seen) == PER_ROW * MAX_ROWS:
            continue  # the same action on the same version: one button does it
        style = discord.ButtonStyle.danger if button.confirm else STYLES[button.style]
        items.add_item(DeliberateButton.made(button.label, style, cid, row=len(seen) // PER_ROW))
        seen.add(cid)
        glass = _glass(session, button)
        if glass is not None and glass not in seen and len(seen) < PER_ROW * MAX_ROWS:
            secondary, row = discord.ButtonStyle.secondary, len(seen) // PER_ROW
            items.add_item(DeliberateButton.made(GLASS_LABEL, secondary, glass, row=row))
            seen.add(glass)
    return items if seen else None


def _glass(session: str, button: Button) -> str | None:
    """The custom_id of "Break glass" beside a proposal's Apply whose key names a role that
    may (None: none, or it does not fit a custom_id)."""
    if not button.break_glass:
        return None
    try:
        return glass_id(session, button)
    except ValueError as exc:
        log.error("break glass left out: %s", exc)
        return None


def _split(text: str) -> list[str]:
    """At line ends where it can; where a line is longer, at MAX_CONTENT or just before,
    where the cut changes nothing the line shows (``cut``)."""
    chunks, chunk = [], ""
    for line in text.splitlines(keepends=True):
        while len(line) > MAX_CONTENT:
            if chunk:
                chunks.append(chunk)
                chunk = ""
            at = cut(line, MAX_CONTENT)
            chunks.append(line[:at])
            line = line[at:]
        if len(chunk) + len(line) > MAX_CONTENT:
            chunks.append(chunk)
            chunk = ""
        chunk += line
    chunks.append(chunk)
    return [c.strip("\n") or "…" for c in chunks]


def closed_content(content: str, lines: list[str]) -> str:
    """A clicked message's text with what each click did, in place of earlier such lines."""
    own = content.split(CLOSED, 1)[0]
    closing = "\n".join(lines)
    room = MAX_CONTENT - len(CLOSED) - len(closing)
    if room < len(own):
        own = own[: cut(own, max(room - 1, 0))] + "…"
    return (own + CLOSED + closing)[:MAX_CONTENT]


def disabled_buttons(message: discord.Message) -> discord.ui.View | None:
    """The message's buttons, greyed out: they show what was on offer, and cannot be used."""
    items = discord.ui.View(timeout=None)
    for row, component in enumerate(message.components):
        for child in getattr(component, "children", []):
            cid = getattr(child, "custom_id", None) or ""
            if child.type is not discord.ComponentType.button or not TEMPLATE.fullmatch(cid):
                continue
            label = child.label or ""
            items.add_item(DeliberateButton.made(label, child.style, cid, row=row, disabled=True))
    return items if items.children else None
