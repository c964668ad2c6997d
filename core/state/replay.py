"""Rebuilding the snapshot from the mutation log, and proving it equals the live one.

``apply`` restates commit.lua's semantics in Python on purpose: replay is an independent
reading of the log, so ``verify`` catches a store that drifted from its own history. It
reads only what the hash chain vouches for (core/state/chain/start.py).
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from pydantic import JsonValue

from core.errors import StoreError
from core.paused_gc import paused_gc
from core.state.chain.start import ChainBroken, Follow, vouched_base
from core.state.chain.tail import cut_short
from core.state.checkpoints import (
    Checkpoints,
    CompactionMark,
    HistoryCompacted,
    Image,
    held_before,
)
from core.state.codec import entry_meta
from core.state.commit_call import ttl_ms
from core.state.entry import Entry
from core.state.moment import Moment, moment_text
from core.state.mutation import Op
from core.state.mutation_log import LogRecord, MutationLog, UnreadableRecord
from core.state.store import Snapshot, StateStore
from core.state.streams import RawRow, id_order, stream_ms

__all__ = [
    "STRETCH",
    "BeforeHistory",
    "Difference",
    "Moment",
    "Pace",
    "ReplayMismatch",
    "Replayer",
    "apply",
    "moment_text",
    "stream_id_le",
    "visible",
]

STRETCH = 1_000  # records a run of the replay's pace times


class ReplayMismatch(StoreError):
    """The log contradicts itself at one record (a version skipped, an impossible op)."""

    def __init__(self, record: LogRecord, message: str) -> None:
        super().__init__(f"{record.log_id}: {record.mutation.key} {message}")
        self.key = record.mutation.key


def stream_id_le(a: str, b: str) -> bool:
    """Stream ids compare as (milliseconds, sequence)."""
    return id_order(a) <= id_order(b)


def _is_live(entry: Entry | None, at_ms: int) -> bool:
    return entry is not None and (entry.expires_at is None or entry.expires_at > at_ms)


def _next_value(record: LogRecord, base: Entry | None) -> JsonValue:
    op, arg = record.mutation.op, record.mutation.value
    if op is Op.SET:
        return arg
    if op is Op.INCR:
        start = base.value if base else 0
        if isinstance(start, bool) or not isinstance(start, int | float):
            raise ReplayMismatch(record, "is incremented but holds no number")
        if isinstance(arg, bool) or not isinstance(arg, int | float):
            raise ReplayMismatch(record, "is incremented by a non-number")
        return start + arg
    if op is Op.APPEND:
        items = base.value if base else []
        if not isinstance(items, list):
            raise ReplayMismatch(record, "is appended to but holds no list")
        return [*items, arg]
    raise ReplayMismatch(record, f"has no value for op {op}")


def apply(image: Image, record: LogRecord) -> None:
    """Apply one logged mutation to ``image``; raises ReplayMismatch where the log disagrees
    with itself."""
    m = record.mutation
    version = image.versions.get(m.key, 0) + 1
    if version != record.version:
        raise ReplayMismatch(record, f"replays to version {version}, the log says {record.version}")
    base = image.entries.get(m.key)
    base = base if _is_live(base, record.ts) else None
    if image.unconfirmed and m.key in image.unconfirmed:  # (as a checkpoint left it)
        image.unconfirmed.discard(m.key)
        if record.prev_said and not held_before(base, record.prev_json, record.prev_sha1):
            raise ReplayMismatch(
                record,
                "held another value just before it, the record says, than the checkpoint "
                "holds: the checkpoint does not match the log",
            )
    image.versions[m.key] = version
    image.last_id = record.log_id
    if m.op is Op.DELETE:
        if base is None:
            raise ReplayMismatch(record, "is deleted while absent")
        image.entries.pop(m.key, None)
        return
    expires: int | None
    if m.ttl_sec is not None:
        expires = record.ts + ttl_ms(m.ttl_sec)
    elif base is not None and m.op in (Op.INCR, Op.APPEND):
        expires = base.expires_at
    else:
        expires = None
    if expires != record.expires_at:
        raise ReplayMismatch(
            record, f"replays to expiry {expires}, the log says {record.expires_at}"
        )
    # built without validating again what the mutation's own validation let through
    image.entries[m.key] = Entry.built(
        m.key, _next_value(record, base), version, record.ts, m.actor, expires, entry_meta(m)
    )


class BeforeHistory(HistoryCompacted):
    """The state at a moment is no longer on record: compaction trimmed the records after it
    and the checkpoint, the oldest state left, is later."""

    def __init__(self, mark: CompactionMark, asked: Moment, oldest: str) -> None:
        super().__init__(
            mark,
            f"the state at {asked} is no longer on record: the oldest moment available is "
            f"{moment_text(stream_ms(oldest))} (log {oldest})",
        )
        self.asked = asked
        self.oldest = oldest


def visible(image: Image, at_ms: int) -> dict[str, Entry]:
    return {k: e for k, e in image.entries.items() if _is_live(e, at_ms)}


@dataclass(frozen=True)
class Difference:
    key: str
    live: Entry | int | None
    replayed: Entry | int | None
    what: str

    def __str__(self) -> str:
        if self.live is None and self.replayed is None:
            return f"{self.key}: {self.what}"
        return f"{self.key}: {self.what} (live {_show(self.live)}, replayed {_show(self.replayed)})"


def _show(side: Entry | int | None) -> str:
    if isinstance(side, Entry):
        return f"v{side.version} {json.dumps(side.value)[:60]}"
    return "absent" if side is None else f"version {side}"


@dataclass
class Pace:
    """How fast a replay went: ``lap(n)`` after each ``n`` records since the last lap (or
    the start); ``rate``, the median of the laps' records per second, so that a run slowed
    by another process moves it little."""

    clock: Callable[[], float] = time.perf_counter
    rates: list[float] = field(default_factory=list)
    _since: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        self._since = self.clock()

    def lap(self, records: int) -> None:
        now = self.clock()
        if records > 0 and now > self._since:
            self.rates.append(records / (now - self._since))
        self._since = now

    @property
    def rate(self) -> float | None:
        """Records per second, the median over the laps; None before any."""
        return statistics.median(self.rates) if self.rates else None


@dataclass
class Replayer:
    """Rebuilds state from where the chain starts (the checkpoint the compaction mark vouches
    for, or the log's first record), checking each record's link as it reads it and that
    the log goes on from the last one read as the chain says: a log that does not verify as
    far as the replay reads, or that was cut short past it, is never answered from
    (``ChainBroken``).
    Nothing is written: only a compaction moves the checkpoint. ``pace``: how fast the last
    rebuild read, checked and applied its records."""

    store: StateStore
    progress: Callable[[int], None] | None = None
    applied: int = field(default=0, init=False)
    pace: Pace = field(default_factory=Pace, init=False)
    started_after: str | None = field(default=None, init=False)  # the checkpoint used, if any
    _follow: Follow | None = field(default=None, init=False, repr=False)

    @property
    def log(self) -> MutationLog:
        return MutationLog(self.store.redis, self.store.keys)

    def rebuild(self, until: str | None = None, *, use_checkpoint: bool = True) -> Image:
        """Replay the log from the checkpoint up to ``until`` inclusive. ``HistoryCompacted``
        when that needs records compaction trimmed (``meanwhile``: a compaction under way
        trimmed them, and the checkpoint now starts past them); ``ChainBroken`` when the
        start, or a record read, does not verify."""
        start, vouched = vouched_base(self.store.redis, self.store.keys)
        mark = start.mark
        if mark is not None and not use_checkpoint:
            raise HistoryCompacted(
                mark, "replaying from scratch is no longer possible: the checkpoint is the base"
            )
        image = vouched or Image()
        if mark is not None and until is not None and not stream_id_le(image.last_id or "", until):
            raise HistoryCompacted(mark, f"the state at {until} is before the checkpoint")
        base = self.started_after = image.last_id
        self._follow = follow = Follow(start)
        self.pace = pace = Pace()
        first = self.applied
        try:  # from the log's first record: one planted before the start is seen too
            with paused_gc():
                for record in _chained(follow, self.log.raw_rows(until=until)):
                    if base is not None and stream_id_le(record.log_id, base):
                        continue  # held by a checkpoint that reaches past the mark (verified)
                    apply(image, record)
                    self.applied += 1
                    if (self.applied - first) % STRETCH == 0:
                        pace.lap(STRETCH)
                    if self.progress and self.applied % 10_000 == 0:
                        self.progress(self.applied)
            pace.lap((self.applied - first) % STRETCH)
            self._went_on(follow)
        except (ReplayMismatch, ChainBroken):  # a gap a compaction left under the replay?
            self._compacted_under(base)
            raise
        self._compacted_under(base)
        return image

    def as_of(self, moment: Moment, attempts: int = 3) -> Image:
        """The state at ``moment``, rebuilt in memory: from the checkpoint when it is at or
        before the moment, else from the start of the log. ``BeforeHistory`` when neither
        reaches it (the log was compacted past it)."""
        try:
            return self.rebuild(until=moment.last)
        except HistoryCompacted as exc:
            checkpoints = Checkpoints(self.store.redis, self.store.keys)
            mark, oldest = checkpoints.mark(), checkpoints.reaches()
            if mark is not None and oldest is not None and not stream_id_le(oldest, moment.last):
                raise BeforeHistory(mark, moment, oldest) from None
            if not exc.meanwhile or attempts <= 1:
                raise
        return self.as_of(moment, attempts - 1)

    def state_at(self, log_id: str) -> str:
        """The digest of the state just after record ``log_id`` (what a signed head names)."""
        moment = Moment.at_record(log_id)
        return self.as_of(moment).digest(moment.at_ms)

    def history(self, since: Moment, until: Moment | None) -> Iterator[tuple[Image, LogRecord]]:
        """Each record from ``since`` through ``until`` (None: the newest), oldest first,
        with the state just before it: one image, which moves on by each record once the
        next is asked for. Nothing is written."""
        image = self.as_of(since.before())
        follow = self._follow
        assert follow is not None  # as_of rebuilt it
        rows = self.log.raw_rows(image.last_id, until=None if until is None else until.last)
        for record in _chained(follow, rows):
            yield image, record
            apply(image, record)
        self._went_on(follow)

    def _went_on(self, follow: Follow) -> None:
        """``ChainBroken`` when the log does not go on from where ``follow`` stopped as the
        chain says (records deleted past it, or at the end: ``cut_short``)."""
        if (cut := cut_short(self.store.redis, self.store.keys, follow)) is not None:
            raise ChainBroken(cut)

    def _compacted_under(self, base: str | None) -> None:
        """Raise when the log was compacted past ``base`` while the replay read it: the
        pages it read after that may have skipped trimmed records."""
        mark = Checkpoints(self.store.redis, self.store.keys).mark()
        if mark is not None and (base is None or not stream_id_le(mark.through, base)):
            raise HistoryCompacted(mark, "it was compacted during the replay", meanwhile=True)

    def verify(
        self, *, use_checkpoint: bool = True, attempts: int = 3
    ) -> tuple[Snapshot, list[Difference]]:
        """Rebuild up to the live snapshot's last log id and compare both, key by key; read
        both again (``attempts`` in all) when a compaction moved the checkpoint meanwhile."""
        live = self.store.snapshot()
        if live.last_log_id is None:
            return live, [
                Difference(k, v, None, "version without a log") for k, v in live.versions.items()
            ]
        try:
            image = self.rebuild(until=live.last_log_id, use_checkpoint=use_checkpoint)
        except HistoryCompacted as exc:  # compacted under it: once more, from the new base
            if not exc.meanwhile or attempts <= 1:
                raise
            return self.verify(use_checkpoint=use_checkpoint, attempts=attempts - 1)
        except ReplayMismatch as exc:
            return live, [Difference(exc.key, None, None, f"the log contradicts itself: {exc}")]
        except UnreadableRecord as exc:  # nothing after it can be proven
            return live, [Difference("-", None, None, str(exc))]
        return live, compare(live, image)


def _chained(follow: Follow, rows: Iterable[RawRow]) -> Iterator[LogRecord]:
    """The records of ``rows`` (as the stream holds them), each checked against the chain
    first."""
    for log_id, fields in rows:
        if (broken := follow.raw(log_id, fields)) is not None:
            raise ChainBroken(broken)
        yield LogRecord.from_raw(log_id, fields)


def compare(live: Snapshot, image: Image) -> list[Difference]:
    diffs: list[Difference] = []
    for key in sorted(set(live.versions) | set(image.versions)):
        lv: int | None = live.versions.get(key)
        rv: int | None = image.versions.get(key)
        if lv != rv:
            diffs.append(Difference(key, lv, rv, "version counter differs"))
    replayed = visible(image, live.at_ms)
    for key in sorted(set(live.entries) | set(replayed)):
        a, b = live.entries.get(key), replayed.get(key)
        if a is None or b is None:
            diffs.append(Difference(key, a, b, "present on one side only"))
        elif _canonical(a) != _canonical(b):
            diffs.append(Difference(key, a, b, "entry differs"))
    return diffs


def _canonical(entry: Entry) -> str:
    """Entries compare as JSON text: 1, 1.0 and true are equal in Python but not in the log."""
    return json.dumps(entry.model_dump(mode="json", by_alias=True), sort_keys=True)
