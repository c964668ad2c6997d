"""One page of the mutation log, newest first, for the Log page: filtered by key (exact, or
a prefix ending in ``*``), actor (part of ``kind:id`` or of ``platform:id``) and time (from,
to: they bound the stream's ids, so they cost nothing), paged by log id cursors (``before``:
older than that record; ``after``: newer). A key or actor filter reads at most ``scan``
records a page, then says how far it got and offers to go on: never an unbounded read of a
long log, never a silent gap."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from core.state.mutation_log import LogRecord, MutationLog, UnreadableRecord
from core.state.streams import RawRow, raw_range

__all__ = ["PAGE", "SCAN", "LogFilter", "LogPage", "read_page"]

PAGE = 50
SCAN = 5000
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,199}\*?$|^\*$")
_CURSOR = re.compile(r"^\d{1,20}-\d{1,20}$")
_TIMES = ("%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d")


_ID_MAX = 2**64 - 1  # each part of a stream id


def _cursor(text: str, name: str) -> str | None:
    """A log id a page can start after or end before: Redis refuses a part past 2^64 - 1,
    anything before 0-0 and anything after the largest id."""
    if not _CURSOR.match(text):
        return None
    ms, seq = (int(part) for part in text.split("-"))
    if ms > _ID_MAX or seq > _ID_MAX:
        return None
    if (name == "before" and ms == seq == 0) or (name == "after" and ms == seq == _ID_MAX):
        return None
    return text


@dataclass(frozen=True)
class LogFilter:
    key: str = ""
    actor: str = ""
    since_ms: int | None = None
    until_ms: int | None = None
    before: str | None = None
    after: str | None = None

    @property
    def raw_key(self) -> str:
        """What the stored JSON of a mutation of a wanted key holds (a key needs no escaping
        in JSON): a record without it is skipped unread."""
        if not self.key:
            return ""
        return f'"key":"{self.key[:-1]}' if self.key.endswith("*") else f'"key":"{self.key}"'

    @property
    def narrows(self) -> bool:
        """Whether some records in the id range may not match (the scan bound counts)."""
        return bool(self.key or self.actor)

    def matches(self, record: LogRecord) -> bool:
        m = record.mutation
        if self.key:
            if self.key.endswith("*"):
                if not m.key.startswith(self.key[:-1]):
                    return False
            elif m.key != self.key:
                return False
        if self.actor:
            wanted = self.actor.lower()
            if wanted not in str(m.actor).lower() and wanted not in m.actor.identity.lower():
                return False
        return True

    @classmethod
    def parse(cls, args: Mapping[str, str]) -> tuple[LogFilter, list[str]]:
        """The filter the query asks for, and what in it could not be read (each naming its
        field); a field that cannot be read is left out."""
        problems: list[str] = []
        key = args.get("key", "").strip()
        if key and not _KEY.match(key):
            problems.append(f"key: {key!r} is not a key (letters, digits, _ . : -; a * at the end)")
            key = ""
        actor = args.get("actor", "").strip()[:200]
        times: dict[str, int | None] = {}
        for name in ("since", "until"):
            text = args.get(name, "").strip()
            times[name] = None
            if text:
                ms = _ms(text, end=name == "until")
                if ms is None:
                    problems.append(
                        f"{name}: {text!r} is not a time such as 2026-11-23T18:30 (UTC)"
                    )
                elif ms < 0:  # (no log id is: Redis refuses one)
                    problems.append(f"{name}: {text!r} is before 1970, when no log starts")
                else:
                    times[name] = ms
        cursors: dict[str, str | None] = {}
        for name in ("before", "after"):
            text = args.get(name, "").strip()
            cursors[name] = _cursor(text, name)
            if text and cursors[name] is None:
                problems.append(f"{name}: {text!r} is not a log id such as 1795474691733-0")
        return (
            cls(
                "" if key == "*" else key,
                actor,
                times["since"],
                times["until"],
                cursors["before"],
                cursors["after"],
            ),
            problems,
        )


@dataclass(frozen=True)
class LogPage:
    records: list[LogRecord]  # newest first
    older: str | None  # the cursor for the next older page (None: nothing older)
    newer: str | None  # the cursor for the next newer page (None: nothing newer was skipped)
    scanned: int
    scan_ran_out: bool  # the scan bound stopped it before the page was full


def read_page(log: MutationLog, f: LogFilter, page: int = PAGE, scan: int = SCAN) -> LogPage:
    """Newest first from ``f.before`` (or the newest), or with ``f.after`` the page just
    newer than it."""
    since = str(f.since_ms) if f.since_ms is not None else "-"
    until = str(f.until_ms) if f.until_ms is not None else "+"
    rising = f.after is not None
    if rising:
        low, high = f"({f.after}", until
    else:
        low, high = since, f"({f.before}" if f.before else until
    found: list[LogRecord] = []
    scanned, last, ended = 0, None, False
    wanted = f.raw_key.encode()
    while len(found) < page and scanned < scan:
        count = min(500 if f.narrows else page, scan - scanned)
        # (read as the stream holds them: a record that is not UTF-8 is named, not the page's end)
        chunk: list[RawRow]
        if rising:
            chunk = raw_range(log.redis, log.keys.log, low, high, count)
        else:
            chunk = raw_range(log.redis, log.keys.log, high, low, count, reverse=True)
        unseen = 0
        for position, (log_id, fields) in enumerate(chunk):
            scanned, last = scanned + 1, log_id
            if wanted and wanted not in fields.get(b"mutation", b""):
                continue  # not this key: no need to read the record
            record = _record(log, log_id, fields)
            if record is not None and f.matches(record) and _within(record, f):
                found.append(record)
                if len(found) == page:
                    unseen = len(chunk) - position - 1
                    break
        if len(chunk) < count:
            ended = unseen == 0  # the range is read to its end
            break
        if rising:
            low = f"({last}"
        else:
            high = f"({last}"
    out_of_scan = not ended and len(found) < page
    if rising:
        found.reverse()
        newer = None if ended else (found[0].log_id if found else last)
        older = found[-1].log_id if found else f.after
    else:
        older = None if ended else last
        newer = found[0].log_id if found and f.before else None
    return LogPage(found, older, newer, scanned, out_of_scan)


def _record(log: MutationLog, log_id: str, fields: Mapping[bytes, bytes]) -> LogRecord | None:
    """The record, or None (kept in ``log.skipped``, so the page names it) when unreadable."""
    try:
        return LogRecord.from_raw(log_id, fields)
    except UnreadableRecord as exc:
        log.skipped.append(exc)
        return None


def _within(record: LogRecord, f: LogFilter) -> bool:
    ms = int(record.log_id.split("-")[0])
    if f.since_ms is not None and ms < f.since_ms:
        return False
    return f.until_ms is None or ms <= f.until_ms


def _ms(text: str, *, end: bool) -> int | None:
    if text.isascii() and text.isdigit() and len(text) <= 15:
        return int(text)
    for shape in _TIMES:
        try:
            when = datetime.strptime(text, shape).replace(tzinfo=UTC)
        except ValueError:
            continue
        ms = int(when.timestamp() * 1000)
        if end:  # "until 18:30" takes in all of 18:30 (a date: all of that day)
            ms += (
                86_400_000 if shape == "%Y-%m-%d" else 60_000 if shape.endswith("%M") else 1000
            ) - 1
        return ms
    return None
