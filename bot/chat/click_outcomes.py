"""What a click came to, read from the runtime's events the same way on every platform: the
line that closes the clicked message (what was committed and by whom, which action asked the
assistant again, or that the clicked proposal expired), and which views still need posting
after it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.deliberation.view import View, ViewKind
from core.runtime.runner import Event, OutcomeEvent

__all__ = ["EXPIRED", "ICONS", "NEXT", "ClickOutcome"]

ICONS = {"committed": "✅", "pending": "⏳", "discarded": "🗑️"}
EXPIRED = "⌛"
NEXT = "What next?"


@dataclass(frozen=True)
class ClickOutcome:
    events: list[Event]

    @property
    def done(self) -> OutcomeEvent | None:
        """The click's command, when it came to something a message can show."""
        return next(
            (e for e in self.events if isinstance(e, OutcomeEvent) and e.outcome in ICONS), None
        )

    @property
    def expired(self) -> OutcomeEvent | None:
        """The click's command, when it hit a proposal past its deadline (its buttons can
        do nothing more)."""
        return next(
            (e for e in self.events if isinstance(e, OutcomeEvent) and e.reason == "expired"),
            None,
        )

    @property
    def asked_again(self) -> bool:
        return any(isinstance(e, View) and e.kind is ViewKind.REPLY for e in self.events)

    def closing_line(
        self, clicker: str, label: str, mention: Callable[[str], str], escape: Callable[[str], str]
    ) -> str | None:
        """What replaces the clicked message's buttons, in the markup Slack and Discord share
        (``*label*``); None when the click changed nothing. ``mention`` shows an actor
        (``user:ID``) the platform's way, ``escape`` makes text inert in its markup."""
        done = self.done
        if done is not None and not done.duplicate:
            by = mention(done.by or done.actor)
            return f"{ICONS[done.outcome]} {escape(done.message)} — by {by}"
        expired = self.expired
        if expired is not None:  # "This proposal expired at …; nothing was changed."
            sentence = expired.message[:1].upper() + expired.message[1:] + "."
            return f"{EXPIRED} {escape(sentence)}"
        if self.asked_again:
            return f"↪ {mention(clicker)} chose *{escape(label)}*"
        return None

    def follow_ups(self, closed: bool) -> list[View]:
        """The views to post once the clicked message is (or could not be) closed: a repeated
        commit goes to the clicker alone; with the message closed, its outcome is not said
        again, only the buttons that come next, under "What next?"; nor is an expiry (the
        clicker's notice of it)."""
        done, views = self.done, []
        expired = closed and self.expired is not None
        for event in self.events:
            if not isinstance(event, View):
                continue
            if expired and event.kind is ViewKind.NOTICE:
                continue  # the closed message says it all
            if event.kind is ViewKind.OUTCOME and done is not None and done.duplicate:
                event = event.model_copy(update={"ephemeral": True})
            elif event.kind is ViewKind.OUTCOME and closed:
                if not event.buttons:
                    continue  # the closed message says it all
                event = event.model_copy(update={"text": event.nudge or NEXT, "nudge": None})
            views.append(event)
        return views
