"""What a click came to, typed, as the runtime hands it back (``Runtime.click``): the outcome
of the click's own command when a message can show it (committed, pending, discarded),
the expiry it hit, whether it asked the assistant again, and the views it led to. Adapters
render it (``bot.chat.click_outcomes``); none works it out again from a list of events."""

from __future__ import annotations

from dataclasses import dataclass

from core.deliberation.view import View, ViewKind

from .events import Event, OutcomeEvent

__all__ = ["SHOWN_OUTCOMES", "Clicked"]

SHOWN_OUTCOMES = ("committed", "pending", "discarded")  # what a closed message can say


@dataclass(frozen=True)
class Clicked:
    done: OutcomeEvent | None  # the click's command, when it came to one of SHOWN_OUTCOMES
    expired: OutcomeEvent | None  # the click's command, when its proposal was past its deadline
    asked_again: bool  # the click asked the assistant again (a new reply follows)
    views: tuple[View, ...]  # what the click led to, in order
    events: tuple[Event, ...]  # everything the send reported, in order (for ``--json``)

    @classmethod
    def of(cls, events: list[Event]) -> Clicked:
        done = expired = None
        for event in events:
            if not isinstance(event, OutcomeEvent):
                continue
            if done is None and event.outcome in SHOWN_OUTCOMES:
                done = event
            if expired is None and event.reason == "expired":
                expired = event
        views = tuple(e for e in events if isinstance(e, View))
        asked = any(view.kind is ViewKind.REPLY for view in views)
        return cls(done, expired, asked, views, tuple(events))

    @property
    def repeated(self) -> bool:
        """The click's commit had been made already (a second click, a resent payload)."""
        return self.done is not None and self.done.duplicate
