"""Moments and durations as people read them. A deadline is a moment of the Redis server's
clock (epoch ms), said in UTC to the second and, against the server's "now", as how far off
it is ("in 25 min", "3 min ago": one past is said as past, never as a negative time). A
proposal's expiry (``expiry_phrase``), its escalation (``escalation_phrase``) and the revert
of a change made for a while (``revert_phrase``; before it is applied, ``lasting_phrase``)
are said with these wherever they show: the CLI, the trace, the console, the web, chat. A
duration reads as ``duration_sec`` parses it (``1h30m``). A leaf: ``deliberate state get``
reads it without the gateway. ``TimedChange`` is where a change for a while stands
(``StateStore.timed`` and ``core.gateway.timed.timed_change`` read it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = [
    "UNITS",
    "TimedChange",
    "duration_text",
    "escalation_phrase",
    "expiry_phrase",
    "lasting_phrase",
    "moment_text",
    "relative_text",
    "revert_phrase",
    "utc_text",
    "view_deadlines",
]


UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}  # of a duration (``1h30m``)


def duration_text(sec: float) -> str:
    """Seconds as ``duration_sec`` reads them (``1h30m``)."""
    left, parts = round(sec), list[str]()
    for unit in ("d", "h", "m", "s"):
        size = UNITS[unit]
        if left >= size or (unit == "s" and not parts):
            parts.append(f"{left // size}{unit}")
            left %= size
    return "".join(parts)


def lasting_phrase(for_sec: float) -> str:
    """What a proposal for a while does once applied (its revert's moment is not known yet)."""
    return f"reverts by itself {duration_text(for_sec)} after it is applied"


def utc_text(ms: int) -> str:
    """A moment (epoch ms) in UTC, to the second: a change may last 90s."""
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def relative_text(ms: int, now_ms: int) -> str:
    """How far ``ms`` is from ``now_ms``: ``in 25 min``, ``3 min ago``, ``now``. A moment
    gone by is said as past however close (``1 s ago``): "now" for a deadline just missed
    would read as still open."""
    if ms == now_ms:
        return "now"
    seconds = round(abs(ms - now_ms) / 1000)
    if ms > now_ms:
        return f"in {_span(seconds)}" if seconds else "now"
    return f"{_span(max(seconds, 1))} ago"


def _span(seconds: int) -> str:
    """``40 s``, ``25 min``, ``2 h 5 min``, ``3 d 4 h``: rounded to the unit shown, so that
    a deadline a day off reads ``24 h`` a few milliseconds after it was set, as before."""
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h" + (f" {rest} min" if rest else "")
    days, hours = divmod(round(minutes / 60), 24)
    return f"{days} d" + (f" {hours} h" if hours else "")


def moment_text(ms: int, now_ms: int | None = None) -> str:
    """``2026-05-01 12:30:00 UTC (in 25 min)``; without ``now_ms``, the UTC part alone (a
    record read later, a chat message that stays)."""
    return utc_text(ms) if now_ms is None else f"{utc_text(ms)} ({relative_text(ms, now_ms)})"


def expiry_phrase(deadline_ms: int, now_ms: int | None = None) -> str:
    """Until when a proposal may be applied: ``expires at …``, or ``expired at …`` once
    past."""
    past = now_ms is not None and deadline_ms <= now_ms
    return f"{'expired' if past else 'expires'} at {moment_text(deadline_ms, now_ms)}"


def escalation_phrase(due_ms: int, done_ms: int | None, now_ms: int | None = None) -> str:
    """When a proposal nobody decided is (or was) posted to its reviewers: ``escalates at
    …`` while ahead, ``escalated at …`` once done (``done_ms``: when the sweep posted it),
    ``escalation due since …`` when past and not yet done (the next sweep does it)."""
    if done_ms is not None:
        return f"escalated at {moment_text(done_ms, now_ms)}"
    if now_ms is not None and due_ms <= now_ms:
        return f"escalation due since {moment_text(due_ms, now_ms)}"
    return f"escalates at {moment_text(due_ms, now_ms)}"


def revert_phrase(
    at_ms: int, now_ms: int | None = None, *, by: str | None = None, state: str = "waiting"
) -> str:
    """When a change made for a while reverts by itself, and the mutation that reverts it
    (``by``, when named). ``state`` ``waiting``: ``reverts at …``, or ``revert due since
    …`` once past (the worker's next sweep does it); ``reverted``: ``reverted at …`` (when
    it did); ``refused``: its revert was not made (the key changed since: the decision log
    says why)."""
    mutation = f" by {by}" if by else ""
    when = moment_text(at_ms, now_ms)
    if state == "reverted":
        return f"reverted at {when}{mutation}"
    if state == "refused":
        return f"not reverted at {when}{mutation} (refused: see the trace)"
    if now_ms is not None and at_ms <= now_ms:
        return f"revert due since {when}{mutation}"
    return f"reverts at {when}{mutation}"


@dataclass(frozen=True)
class TimedChange:
    """Mutation ``mutation_id``, made for a while, as it stands: its revert (mutation
    ``by``) ``waiting`` (``at``: its deadline), ``reverted`` (``at``: when the revert
    committed) or ``refused`` (``at``: its deadline; the decision log says why)."""

    mutation_id: str
    at: int
    by: str
    state: str = "waiting"

    def phrase(self, now_ms: int | None = None) -> str:
        return revert_phrase(self.at, now_ms, by=self.by, state=self.state)


def view_deadlines(
    expires_at: int | None,
    lasts_sec: float | None,
    reverts_at: int | None,
    now_ms: int | None = None,
) -> list[tuple[str, int | None]]:
    """What a message says under a view of the deadlines it carries (``View``): each phrase,
    with the moment it names (for a platform's own relative time; None: a duration)."""
    said: list[tuple[str, int | None]] = []
    if expires_at is not None:
        said.append((expiry_phrase(expires_at, now_ms), expires_at))
    if lasts_sec is not None:
        said.append((lasting_phrase(lasts_sec), None))
    if reverts_at is not None:
        said.append((revert_phrase(reverts_at, now_ms), reverts_at))
    return said
