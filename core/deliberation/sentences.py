"""Every sentence the core says to people about a click, in one place: the notices of the
loop (a stale, unknown, repeated or impossible click) and the words for what a click came to
(committed, proposed, refused, discarded), which the runtime puts into each outcome. Slack,
Discord, the console and ``--json`` all show these words as they are."""

from __future__ import annotations

import json

from pydantic import JsonValue

__all__ = [
    "GONE",
    "MOVED_ON",
    "NOTHING_EARLIER",
    "NOTHING_TO_UNDO",
    "NO_LONGER_PENDING",
    "STALE",
    "already_done",
    "already_handled",
    "already_resolved",
    "applying_now",
    "back_to",
    "broke_glass",
    "by_whom",
    "cannot_commit",
    "committed",
    "conflict",
    "denied",
    "discarded",
    "not_done",
    "placeholder",
    "proposed",
    "short",
    "unknown_action",
]

STALE = "This suggestion changed; here is the current one."
GONE = "This suggestion is no longer on the table."
NO_LONGER_PENDING = "This proposal is no longer pending."
NOTHING_TO_UNDO = "There is nothing to undo here: Undo reverts what a click here committed."
NOTHING_EARLIER = "There is no earlier candidate to go back to."
MOVED_ON = "The suggestion changed while I was working on it; say it again if it still applies."


def short(value: JsonValue, limit: int = 200) -> str:
    """A value as people read it: JSON, cut to ``limit`` characters with an ellipsis."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def unknown_action(action: str) -> str:
    return f"{action} is not an action this bot knows."


def already_done(by: str) -> str:
    return f"Already done by {by}."


def already_handled(status: str) -> str:
    return f"This click was already handled ({status})."


def cannot_commit(problem: Exception) -> str:
    return f"This action cannot be committed: {problem}"


def placeholder(filler: str) -> str:
    return (
        f'Not committed: the suggestion still says "{filler}", which only people can fill in. '
        "Say what goes there, then click again."
    )


def not_done(message: str) -> str:
    return f"Not done: {message}"


def by_whom(message: str, by: str) -> str:
    return f"{message} (by {by})"


def committed(
    op: str, key: str, value: JsonValue, version: int, duplicate: bool, until: str | None = None
) -> str:
    """``until``: when a change made for a while reverts by itself."""
    shown = "" if value is None else f" {short(value)}"
    again = " (already committed)" if duplicate else ""
    lasts = f" until {until}" if until else ""
    return f"Committed: {op} {key}{shown} (v{version}){lasts}{again}"


def broke_glass(message: str, reason: str) -> str:
    """A commit made by breaking the glass: said so, with why."""
    return f"Break-glass apply. {message}; reason: {reason}"


def proposed(summary: str) -> str:
    return f"Proposed: {summary}; awaits a person with the right role"


def conflict(key: str, value: JsonValue, version: int, by: str) -> str:
    return f"{key} was changed elsewhere: it is {short(value)} (v{version}, by {by})"


def applying_now() -> str:
    return "someone was applying this proposal just now; try again"


def already_resolved(status: str, by: str | None) -> str:
    return f"this proposal was already {status}{f' by {by}' if by else ''}"


def discarded(summary: str) -> str:
    return f"Discarded proposal: {summary}"


def denied(summary: str) -> str:
    """A discard counted towards the denials that end a proposal; it still waits."""
    return f"Denied proposal: {summary}"


def back_to(text: str) -> str:
    return f"Back on the table: {text}"
