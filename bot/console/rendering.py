"""How the console shows what the loop says: a view as text (a ``Palette`` colours its
parts, none unless the front end asks) or as one JSON object per event, each button with its
number. The words of a view show their control characters as escapes (``bot.screen``)
before they are painted: a coloured console writes through a stream that keeps colours
alone (``bot.screen.colour_stream``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.screen import json_safe, one_line, visible
from core.deliberation.beats import ActionStyle
from core.deliberation.view import Button, View
from core.runtime.events import Event, OutcomeEvent
from core.time_phrases import view_deadlines

__all__ = [
    "COLOURS",
    "PLAIN",
    "Numbering",
    "Out",
    "Palette",
    "event_json",
    "json_line",
    "render_view",
]

Out = Callable[[str], None]


@dataclass(frozen=True)
class Palette:
    """An ANSI SGR code per part of the output; an empty code leaves that part as it is."""

    button: str = ""
    primary: str = ""
    danger: str = ""
    candidate: str = ""
    error: str = ""
    note: str = ""

    def paint(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if code else text


PLAIN = Palette()
COLOURS = Palette(
    button="36", primary="1;32", danger="1;31", candidate="1;33", error="31", note="2"
)


Numbering = Callable[[Button], int]


def event_json(event: Event, number: Numbering | None = None) -> dict[str, Any]:
    """An event as one JSON object; each button with its number ``n`` (by ``number``, else
    its place in the view)."""
    if isinstance(event, OutcomeEvent):
        return {"event": event.outcome} | event.model_dump(mode="json", exclude={"outcome"})
    data = event.model_dump(mode="json", exclude={"kind"})
    for place, (button, shown) in enumerate(zip(event.buttons, data["buttons"], strict=True), 1):
        shown["n"] = number(button) if number else place
    return {"event": event.kind.value} | data


def render_view(
    event: View,
    palette: Palette = PLAIN,
    number: Numbering | None = None,
    now_ms: int | None = None,
) -> str:
    """``event`` as lines; its deadlines counted from ``now_ms`` (the Redis server's clock)."""
    text = visible(event.text)
    candidate = None if event.candidate is None else visible(event.candidate.text)
    if candidate is not None and candidate in text:
        text = text.replace(candidate, palette.paint(palette.candidate, candidate), 1)
    lines = [f"  (only you) {text}" if event.ephemeral else f"assistant: {text}"]
    if event.fired:
        beats = f"  mode: {event.mode.value}; beats: {', '.join(event.fired)}"
        lines.append(palette.paint(palette.note, one_line(beats)))
    if event.nudge:
        lines.append(palette.paint(palette.note, visible(f"  > {event.nudge}")))
    if event.decides and event.buttons:
        lines.append(palette.paint(palette.note, one_line(f"  decides: {event.decides}")))
    deadlines = view_deadlines(event.expires_at, event.lasts_sec, event.reverts_at, now_ms)
    if deadlines:
        lines.append(palette.paint(palette.note, "  " + "; ".join(d for d, _ in deadlines)))
    if event.buttons:
        numbers = [number(b) if number else n for n, b in enumerate(event.buttons, 1)]
        shown = (_button(n, b, palette) for n, b in zip(numbers, event.buttons, strict=True))
        lines.append("  " + "  ".join(shown))
    return "\n".join(lines)


def _button(number: int, button: Button, palette: Palette) -> str:
    styles = {ActionStyle.PRIMARY: palette.primary, ActionStyle.DANGER: palette.danger}
    label = one_line(button.label)
    return palette.paint(styles.get(button.style, palette.button), f"[{number}] {label}")


def json_line(data: dict[str, Any]) -> str:
    return json_safe(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
