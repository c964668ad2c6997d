"""Retention: trimming the mutation log behind a checkpoint, so that it does not grow without
bound while ``replay --verify`` still proves snapshot == checkpoint + log.

A compaction (one process at a time per workspace):

1. drops from the key index the keys Redis has expired;
2. finds how far the log may go: records older than ``keep_ms`` or beyond the newest
   ``keep_records``, but never a record a consumer group has not handled (delivered and
   acknowledged), never past a record no reader can parse, and never the newest record;
3. replays those records onto the checkpoint the compaction mark vouches for (or onto an
   empty state, when the log was never compacted), checking each record's link of the hash
   chain first: it never compacts past a record that breaks it;
4. writes the checkpoint, trims the records (``XTRIM MINID``) and marks how far the log was
   compacted, with the last link trimmed and the checkpoint's SHA-1, in one step
   (trim_log.lua). ``log``, ``trace`` and ``rules why`` read the mark to say that history
   before it is gone; the chain (core/state/chain/) reads it to vouch for the checkpoint.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from redis.exceptions import ResponseError

from core.paused_gc import paused_gc
from core.state.chain.start import ChainBroken, Follow, vouched_base
from core.state.checkpoints import Image
from core.state.mutation_log import LogRecord, MutationLog, UnreadableRecord
from core.state.replay import ReplayMismatch, apply
from core.state.scripts import server_ms, sweep_index_script, trim_log_script
from core.state.store import StateStore
from core.state.streams import after_id, id_order, raw_range

if TYPE_CHECKING:
    from core.redis.client import RedisClient
    from core.state.keys import WorkspaceKeys

__all__ = ["Compaction", "Compactor", "Retention", "trim"]

_LOCK_MS = 10 * 60 * 1000
_HELD = "held back"  # retention would trim further, but a record must stay


@dataclass(frozen=True)
class Retention:
    """What the log keeps: nothing older than ``keep_ms`` and at most ``keep_records``
    records (None: no limit of that kind). A record goes when either limit says so."""

    keep_ms: int | None = None
    keep_records: int | None = None

    @property
    def trims(self) -> bool:
        return self.keep_ms is not None or self.keep_records is not None

    def __str__(self) -> str:
        parts = []
        if self.keep_ms is not None:
            parts.append(f"{self.keep_ms / 86_400_000:g} days")
        if self.keep_records is not None:
            parts.append(f"{self.keep_records} records")
        return " and ".join(parts) if parts else "everything"


@dataclass(frozen=True)
class Compaction:
    """What one compaction did. ``held_back``: why it trimmed less than retention allowed
    (a consumer group behind, an unreadable record); ``busy``: another process was at it."""

    trimmed: int = 0
    through: str | None = None
    held_back: str | None = None
    index_dropped: int = 0
    log_length: int = 0
    busy: bool = False


@dataclass
class _Carried:
    """A checkpoint image carried along the log: built on the checkpoint of the compaction
    mark through ``base`` ('': never compacted), through ``through``; ``last_ts``: the
    server time of the last record applied; ``stopped``: why it stopped short of what
    retention allows."""

    image: Image
    base: str
    through: str | None = None
    last_ts: int | None = None
    stopped: str | None = None


class Compactor:
    def __init__(self, store: StateStore, retention: Retention) -> None:
        self.store = store
        self.redis: RedisClient = store.redis
        self.keys = store.keys
        self.retention = retention

    def run(self) -> Compaction:
        with self.locked() as held:
            if not held:
                return Compaction(busy=True, log_length=int(self.redis.xlen(self.keys.log)))
            dropped = self.sweep_index()
            trimmed, through, held_back = self._trim() if self.retention.trims else (0, None, None)
            length = int(self.redis.xlen(self.keys.log))
            return Compaction(trimmed, through, held_back, dropped, length)

    @contextmanager
    def locked(self) -> Iterator[bool]:
        """Hold the workspace's compaction lock while the block runs: True, or False when
        another process holds it (then nothing may be compacted)."""
        token = uuid.uuid4().hex
        if not self.redis.set(self.keys.compacting, token, nx=True, px=_LOCK_MS):
            yield False
            return
        try:
            yield True
        finally:
            if self.redis.get(self.keys.compacting) == token:
                self.redis.delete(self.keys.compacting)

    def sweep_index(self) -> int:
        """Drop expired keys from the key index; how many were dropped."""
        sweep, dropped, start = sweep_index_script(self.redis), 0, "-"
        while True:
            names = [str(n) for n in self.redis.zrangebylex(self.keys.index, start, "+", 0, 500)]
            if names:
                entries = [self.keys.entry(n) for n in names]
                dropped += int(sweep(keys=[self.keys.index, *entries], args=names))
            if len(names) < 500:
                return dropped
            start = f"({names[-1]}"

    def _trim(self) -> tuple[int, str | None, str | None]:
        bound, held_back = self.kept_from()
        keep, keep_ms = self.retention.keep_records, self.retention.keep_ms
        most = None if keep is None else max(0, int(self.redis.xlen(self.keys.log)) - keep)
        old = (
            None
            if keep_ms is None
            else f"{max(0, server_ms(self.redis, self.keys.log) - keep_ms)}-0"
        )
        try:
            carried = self._checkpoint(bound, old, most)
        except ChainBroken as exc:
            said = "is not vouched for" if exc.broken.unsealed else "does not verify"
            return 0, None, f"the log's start {said} ({exc.broken}); nothing compacted"
        stopped = held_back if carried.stopped == _HELD else carried.stopped
        if carried.through is None:
            return 0, None, stopped
        image = carried.image
        if carried.last_ts is not None:  # expired before the last record: no reader sees it
            image.entries = {
                k: e
                for k, e in image.entries.items()
                if e.expires_at is None or e.expires_at > carried.last_ts
            }
        covers = image.last_id or carried.through
        trimmed = trim(
            self.redis, self.keys, carried.through, image.to_json(), covers, carried.base
        )
        if trimmed < 0:
            return 0, None, "another compaction trimmed the log meanwhile; nothing done"
        return trimmed, carried.through, stopped

    def kept_from(self) -> tuple[str, str | None]:
        """The first log id that must stay whatever retention says: the newest record, or
        the first one a consumer group still needs; and why, when it is the latter."""
        newest = raw_range(self.redis, self.keys.log, "+", "-", 1, reverse=True)  # (its id)
        if not newest:
            return "0-1", None
        bound, why = newest[0][0], None
        for group, needed in self._groups():
            if id_order(needed) < id_order(bound):
                bound = needed
                why = (
                    f"the consumer group {group!r} has not handled the records from {needed} on "
                    "(is the worker running for this workspace?)"
                )
        timed = self._timed()
        if timed is not None and id_order(timed[0]) < id_order(bound):
            bound = timed[0]
            why = (
                f"a change made for a while (mutation {timed[1]}) is still to revert: its "
                f"record {timed[0]}, which the revert reads, stays until then"
            )
        return bound, why

    def _timed(self) -> tuple[str, str] | None:
        """The oldest log record a change made for a while still needs for its revert (the
        value before it), with its mutation id; None when none waits. Its record is found
        through the mutation's idempotency record (kept 7 days by default): past that, it
        holds nothing back."""
        ids = [str(m) for m in self.redis.zrange(self.keys.timed, 0, -1)]
        if not ids:
            return None
        pipe = self.redis.pipeline(transaction=False)
        for mutation_id in ids:
            pipe.get(self.keys.idempotency(mutation_id))
        found = [
            (str(first).partition("\n")[0], mutation_id)
            for mutation_id, first in zip(ids, pipe.execute(), strict=True)
            if first is not None
        ]
        return min(found, key=lambda f: id_order(f[0])) if found else None

    def _groups(self) -> Iterator[tuple[str, str]]:
        """Each consumer group of the log, with the first id it still needs."""
        try:
            groups = self.redis.xinfo_groups(self.keys.log)
        except ResponseError:  # no log yet
            return
        for group in groups:
            name = str(group["name"])
            needed = after_id(str(group["last-delivered-id"]))
            if int(group["pending"]):
                oldest = self.redis.xpending(self.keys.log, name)["min"]
                if oldest is not None:  # (acknowledged since XINFO: nothing pending)
                    needed = _lower(needed, str(oldest))
            yield name, needed

    def _checkpoint(self, bound: str, old: str | None, most: int | None) -> _Carried:
        """The checkpoint carried through the last record that may go. A record may go
        when it comes before ``bound`` and it is either before ``old`` (by age) or among the
        first ``most`` of the log (by count); and when the chain vouches for it."""
        start, image = vouched_base(self.redis, self.keys)
        base = "" if start.mark is None else start.mark.through
        carried, follow, count = _Carried(image or Image(), base), Follow(start), 0
        with paused_gc():  # (a pass over the log: see core/paused_gc.py)
            for log_id, fields in MutationLog(self.redis, self.keys).raw_rows():
                by_age = old is not None and id_order(log_id) < id_order(old)
                by_count = most is not None and count < most
                if not (by_age or by_count):
                    break
                if id_order(log_id) >= id_order(bound):
                    carried.stopped = _HELD
                    break
                if (broken := follow.raw(log_id, fields)) is not None:
                    carried.stopped = (
                        f"the log's hash chain breaks at {broken}; nothing from it on is compacted"
                    )
                    break
                last = carried.image.last_id
                if last is None or id_order(log_id) > id_order(last):
                    try:
                        record = LogRecord.from_raw(log_id, fields)
                        apply(carried.image, record)
                    except (UnreadableRecord, ReplayMismatch) as exc:  # replay could not pass it
                        carried.stopped = f"{exc}; nothing from it on is compacted"
                        break
                    carried.last_ts = record.ts
                carried.through, count = log_id, count + 1
        return carried


def trim(
    client: RedisClient,
    keys: WorkspaceKeys,
    through: str,
    checkpoint: str,
    covers: str,
    base: str,
    *,
    seal: bool = False,
) -> int:
    """Write ``checkpoint`` (an image's JSON, through ``covers``: ``through`` or later) as
    the checkpoint, trim the log through ``through`` and mark it, in one step, if the mark
    is still through ``base`` ('': none); the records trimmed, or -1 when it was not
    (nothing done). ``seal``: write the checkpoint and the mark even when nothing is
    trimmed."""
    digest = hashlib.sha1(checkpoint.encode()).hexdigest()
    return int(
        trim_log_script(client)(
            keys=[keys.log, keys.compacted, keys.checkpoint, keys.checkpoint_at],
            args=[through, checkpoint, base, "1" if seal else "0", covers, digest],
        )
    )


def _lower(a: str, b: str) -> str:
    return a if id_order(a) <= id_order(b) else b
