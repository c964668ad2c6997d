"""What a click came to (``core.runtime.clicked.Clicked``, as the runtime hands it back),
rendered the same way on every platform: the line that closes the clicked message (what was
committed and by whom, which action asked the assistant again, or that the clicked proposal
expired), and which views still need posting after it."""

from __future__ import annotations

from collections.abc import Callable

from core.deliberation.view import View, ViewKind
from core.runtime.clicked import Clicked

__all__ = ["EXPIRED", "ICONS", "NEXT", "closing_line", "follow_ups"]

ICONS = {"committed": "✅", "pending": "⏳", "discarded": "🗑️"}
EXPIRED = "⌛"
NEXT = "What next?"


def closing_line(
    clicked: Clicked,
    clicker: str,
    label: str,
    mention: Callable[[str], str],
    escape: Callable[[str], str],
    expired_line: Callable[[int], str],
) -> str | None:
    """What replaces the clicked message's buttons, in the markup Slack and Discord share
    (``*label*``); None when the click changed nothing. ``mention`` shows an actor
    (``user:ID``) the platform's way, ``escape`` makes text inert in its markup,
    ``expired_line`` says a deadline passed (the line the worker closes the proposal's
    other messages with: the same, so that a message gets it once)."""
    done = clicked.done
    if done is not None and not done.duplicate:
        by = mention(done.by or done.actor)
        return f"{ICONS[done.outcome]} {escape(done.message)} — by {by}"
    expired = clicked.expired
    if expired is not None and expired.expired_at is not None:
        return expired_line(expired.expired_at)
    if expired is not None:  # (no deadline named: the sentence the clicker was told)
        sentence = expired.message[:1].upper() + expired.message[1:] + "."
        return f"{EXPIRED} {escape(sentence)}"
    if clicked.asked_again:
        return f"↪ {mention(clicker)} chose *{escape(label)}*"
    return None


def follow_ups(clicked: Clicked, closed: bool) -> list[View]:
    """The views to post once the clicked message is (or could not be) closed: a repeated
    commit goes to the clicker alone; with the message closed, its outcome is not said
    again, only the buttons that come next, under "What next?"; nor is an expiry (the
    clicker's notice of it)."""
    views = []
    expired = closed and clicked.expired is not None
    for view in clicked.views:
        if expired and view.kind is ViewKind.NOTICE:
            continue  # the closed message says it all
        if view.kind is ViewKind.OUTCOME and clicked.repeated:
            view = view.model_copy(update={"ephemeral": True})
        elif view.kind is ViewKind.OUTCOME and closed:
            if not view.buttons:
                continue  # the closed message says it all
            view = view.model_copy(update={"text": view.nudge or NEXT, "nudge": None})
        views.append(view)
    return views
