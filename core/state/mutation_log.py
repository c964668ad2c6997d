"""Reading the append-only mutation log (a Redis stream written only by commit.lua)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue, ValidationError

from core.errors import Unreadable
from core.state.checkpoints import Checkpoints, CompactionMark
from core.state.keys import WorkspaceKeys
from core.state.mutation import Mutation
from core.state.streams import RawRow, raw_range, raw_rows

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["KeyHistory", "LogRecord", "MutationLog", "UnreadableRecord"]

log = logging.getLogger("deliberate.store")


class UnreadableRecord(Unreadable):
    """A log record no reader can parse, named by its id."""

    def __init__(self, log_id: str, why: str) -> None:
        super().__init__("log record", log_id, why)
        self.log_id = log_id


@dataclass(frozen=True)
class LogRecord:
    """One committed mutation, with the version it produced, the server time it landed and
    the value the key held just before (``prev_json``: compact JSON, None when absent). A
    previous value longer than the store's ``log_prev_max_bytes`` is not kept: only its
    SHA-1 (``prev_sha1``) and length (``prev_bytes``) are. ``prev_said``: False on a record
    written before records said what their key held (it says nothing either way)."""

    log_id: str
    mutation: Mutation
    version: int
    ts: int
    expires_at: int | None
    prev_json: str | None = None
    prev_sha1: str | None = None
    prev_bytes: int | None = None
    prev_said: bool = True

    @property
    def prev_kept(self) -> bool:
        return self.prev_sha1 is None

    @property
    def prev(self) -> JsonValue:
        """The value before this mutation (None when the key was absent, or not kept)."""
        return None if self.prev_json is None else json.loads(self.prev_json)

    @classmethod
    def from_stream(cls, log_id: str, fields: Mapping[str, str]) -> LogRecord:
        """``UnreadableRecord`` when the fields are not a record this program can read."""
        try:
            return cls._made(
                log_id,
                fields["ts"],
                fields["mutation"],
                fields["version"],
                fields.get("expiresAt"),
                fields.get("prev"),
                fields.get("prevSha1"),
                fields.get("prevBytes"),
            )
        except KeyError as exc:
            raise UnreadableRecord(log_id, f"no {exc.args[0]} field") from None

    @classmethod
    def from_raw(cls, log_id: str, fields: Mapping[bytes, bytes]) -> LogRecord:
        """``from_stream`` of the fields as the stream holds them (bytes): replay reads every
        record this way. Every field must be UTF-8, as for a decoding reader, which could not
        read the record at all; only ``prev`` and ``prevSha1`` are decoded (the numbers are
        read as ASCII, the mutation's JSON from its bytes)."""
        for name, value in fields.items():
            if not (name.isascii() and value.isascii()):
                try:
                    name.decode(), value.decode()
                except UnicodeDecodeError:
                    field = name.decode(errors="replace")
                    raise UnreadableRecord(log_id, f"its {field} field is not UTF-8") from None
        prev, sha1 = fields.get(b"prev"), fields.get(b"prevSha1")
        try:
            return cls._made(
                log_id,
                fields[b"ts"],
                fields[b"mutation"],
                fields[b"version"],
                fields.get(b"expiresAt"),
                None if prev is None else prev.decode(),
                None if sha1 is None else sha1.decode(),
                fields.get(b"prevBytes"),
            )
        except KeyError as exc:
            raise UnreadableRecord(log_id, f"no {exc.args[0].decode()} field") from None

    @classmethod
    def _made(
        cls,
        log_id: str,
        ts_text: str | bytes,
        mutation_json: str | bytes,
        version_text: str | bytes,
        expires: str | bytes | None,
        prev: str | None,
        prev_sha1: str | None,
        prev_bytes: str | bytes | None,
    ) -> LogRecord:
        """The record of fields read as text or as bytes alike: a number is ASCII digits
        either way (``int`` would take other digits and spaces in text alone)."""
        try:
            ts = _whole("ts", ts_text)
            mutation = Mutation.from_log(mutation_json, ts)
            version = _whole("version", version_text)
            size = None if prev_bytes is None else _whole("prevBytes", prev_bytes)
            expires_at = _whole("expiresAt", expires) if expires else None
        except (ValueError, RecursionError) as exc:  # pydantic's ValidationError included
            raise UnreadableRecord(log_id, _first_line(exc)) from None
        # what ``cls(...)`` makes, without a frozen dataclass's eight ``object.__setattr__``
        # (replay reads every record of the log)
        record = object.__new__(cls)
        record.__dict__.update(
            log_id=log_id,
            mutation=mutation,
            version=version,
            ts=ts,
            expires_at=expires_at,
            prev_json=prev or None,
            prev_sha1=prev_sha1 or None,
            prev_bytes=size,
            prev_said=prev is not None or prev_sha1 is not None,
        )
        return record

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = self.mutation.model_dump(mode="json", by_alias=True)
        data.update(logId=self.log_id, version=self.version, expiresAt=self.expires_at)
        reverts = self.mutation.reverts_at(self.ts)
        if reverts is not None:  # a change for a while: when it reverts by itself
            data["revertsAt"] = reverts
        return data


@dataclass(frozen=True)
class KeyHistory:
    """The newest records of one key (oldest first) found among the newest ``scanned``
    records of the log. ``complete``: nothing the question asked for lies beyond the scan (it
    found ``limit`` records, or the key's first version, or reached the start of the log)."""

    records: list[LogRecord]
    scanned: int
    complete: bool


class MutationLog:
    """Reads the log. ``records`` (replay) stops at a record it cannot read, raising
    ``UnreadableRecord``; ``latest``, ``of_key`` and ``get`` (questions people ask) skip it,
    log it, and list it in ``skipped`` until the next question."""

    def __init__(self, client: RedisClient, keys: WorkspaceKeys) -> None:
        self.redis = client
        self.keys = keys
        self.skipped: list[UnreadableRecord] = []

    def _readable(self, rows: Iterable[RawRow]) -> list[LogRecord]:
        found = []
        for log_id, fields in rows:
            try:
                found.append(LogRecord.from_raw(log_id, fields))
            except UnreadableRecord as exc:
                log.warning("%s; skipped", exc)
                self.skipped.append(exc)
        return found

    def compacted(self) -> CompactionMark | None:
        """How far the log was compacted (None: it holds every record ever committed)."""
        return Checkpoints(self.redis, self.keys).mark()

    def starts_at(self, log_id: str) -> bool:
        """Whether ``log_id`` is the oldest record the log holds."""
        first = raw_range(self.redis, self.keys.log, count=1)
        return bool(first) and first[0][0] == log_id

    def __len__(self) -> int:
        return int(self.redis.xlen(self.keys.log))

    def records(
        self, after: str | None = None, batch: int = 1000, until: str | None = None
    ) -> Iterator[LogRecord]:
        """Every record after ``after`` (exclusive) up to ``until`` (inclusive; None: the
        newest), oldest first, read in batches (as the stream holds them: a field that is
        not UTF-8 is named, as any other record that cannot be read)."""
        for log_id, fields in self.raw_rows(after, batch, until):
            yield LogRecord.from_raw(log_id, fields)

    def raw_rows(
        self, after: str | None = None, batch: int = 1000, until: str | None = None
    ) -> Iterator[RawRow]:
        """``records`` unparsed, their fields as the bytes the stream holds (for a reader that
        parses them itself, ``LogRecord.from_raw``, or settles an unreadable one)."""
        start, end = _bounds(after, until)
        return raw_rows(self.redis, self.keys.log, start, batch, end)

    def get(self, log_id: str) -> LogRecord | None:
        """The record with this id, or None when the log no longer holds it (or it cannot
        be read: then it is in ``skipped``)."""
        self.skipped = []
        found = self._readable(raw_range(self.redis, self.keys.log, log_id, log_id))
        return found[0] if found else None

    def latest(self, limit: int, key: str | None = None, batch: int = 500) -> list[LogRecord]:
        """The newest ``limit`` records (of ``key`` only, if given), oldest first: the whole
        log is read if need be (an operator's question; see ``of_key`` for a bounded one)."""
        if key is not None:
            return self.of_key(key, limit, scan=None, batch=batch).records
        self.skipped = []
        if limit <= 0:
            return []
        rows = raw_range(self.redis, self.keys.log, "+", "-", limit, reverse=True)
        return self._readable(reversed(rows))

    def of_key(self, key: str, limit: int, scan: int | None, batch: int = 500) -> KeyHistory:
        """The newest ``limit`` records of ``key``, looked for among the newest ``scan``
        records of the log at most (``None``: all of them)."""
        found: list[LogRecord] = []
        self.skipped = []
        if limit <= 0:
            return KeyHistory(found, 0, complete=True)
        end, scanned, named = "+", 0, key.encode()
        while scan is None or scanned < scan:
            count = batch if scan is None else min(batch, scan - scanned)
            chunk = raw_range(self.redis, self.keys.log, end, "-", count, reverse=True)
            scanned += len(chunk)
            for log_id, fields in chunk:
                if named not in fields.get(b"mutation", b""):  # a key needs no escaping in JSON
                    continue
                readable = self._readable([(log_id, fields)])
                if not readable:
                    continue
                record = readable[0]
                if record.mutation.key == key:
                    found.append(record)
                    if len(found) == limit or record.version == 1:
                        return KeyHistory(found[::-1], scanned, complete=True)
            if len(chunk) < count:
                return KeyHistory(found[::-1], scanned, complete=True)
            end = f"({chunk[-1][0]}"
        return KeyHistory(found[::-1], scanned, complete=False)

    def find(self, mutation_id: str, scan: int | None = None, batch: int = 500) -> LogRecord | None:
        """The record of the mutation with this id, looked for among the newest ``scan``
        records (``None``: all of them), newest first; None when not found there."""
        self.skipped = []
        end, scanned, quoted = "+", 0, f'"id":"{mutation_id}"'.encode()
        while scan is None or scanned < scan:
            count = batch if scan is None else min(batch, scan - scanned)
            chunk = raw_range(self.redis, self.keys.log, end, "-", count, reverse=True)
            scanned += len(chunk)
            for log_id, fields in chunk:
                if quoted not in fields.get(b"mutation", b""):  # ids have no characters to escape
                    continue
                found = self._readable([(log_id, fields)])
                if found and found[0].mutation.id == mutation_id:
                    return found[0]
            if len(chunk) < count:
                return None
            end = f"({chunk[-1][0]}"
        return None


def _whole(name: str, text: str | bytes) -> int:
    """A field that holds a whole number, as commit.lua writes it: ASCII digits alone."""
    if text.isascii() and text.isdigit():
        return int(text)
    shown = text.decode(errors="replace") if isinstance(text, bytes) else text
    raise ValueError(f"its {name} field {shown[:40]!r} is not a whole number")


def _bounds(after: str | None, until: str | None) -> tuple[str, str]:
    """XRANGE's start and end for the records after ``after`` up to ``until``."""
    start, end = f"({after}" if after else "-", until or "+"
    if until and "-" not in until:  # "<ms>" as an end is "<ms>-<any>" to Redis: "<ms>-0"
        end = f"{until}-0"
    return start, end


def _first_line(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"{where + ': ' if where else ''}{first['msg']}"[:200]
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]
