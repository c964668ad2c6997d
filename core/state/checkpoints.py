"""Replay checkpoints: a snapshot image rebuilt from the log, saved with the last log id it
covers, so the next replay starts there instead of at the beginning of the log.

Once the log was compacted, the checkpoint is the only record of the trimmed history's
result: it never moves back (a save older than the one stored is dropped), and the mark of
the compaction says how far it must reach."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from redis.exceptions import WatchError

from core.errors import StoreError
from core.redis_client import watch_broken
from core.state.entry import Entry
from core.state.keys import WorkspaceKeys
from core.state.streams import id_order, stream_ms

if TYPE_CHECKING:
    from core.redis_client import RedisClient

__all__ = ["Checkpoints", "CompactionMark", "HistoryCompacted", "Image", "Saved"]

_log = logging.getLogger("deliberate.replay")


@dataclass
class Image:
    """State rebuilt from the log: every entry ever set and not deleted (expired ones too,
    filtered by time when read), every key's version counter, the last applied log id."""

    entries: dict[str, Entry] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    last_id: str | None = None

    def to_json(self) -> str:
        """One JSON object; each entry serialised by pydantic straight to JSON text (six
        times faster than a dict through ``json.dumps``: a replay saves the image often)."""
        entries = ",".join(e.model_dump_json(by_alias=True) for e in self.entries.values())
        head = json.dumps({"lastId": self.last_id, "versions": self.versions})
        return f'{head[:-1]},"entries":[{entries}]}}'

    @classmethod
    def from_json(cls, raw: str) -> Image:
        data = json.loads(raw)
        entries = [Entry.model_validate(e) for e in data["entries"]]
        return cls({e.key: e for e in entries}, dict(data["versions"]), data["lastId"])


@dataclass(frozen=True)
class CompactionMark:
    """The log was trimmed through ``through`` (inclusive): ``records`` records in all, the
    last time at ``at_ms``. The checkpoint holds their result; ``chain`` (``<n>:<hash>``)
    links the hash chain of the records that remain to the ones that went."""

    through: str
    records: int
    at_ms: int
    chain: str | None = None  # the chain field of the record ``through``, if it had one

    def __str__(self) -> str:
        until = datetime.fromtimestamp(stream_ms(self.through) / 1000, UTC)
        return (
            f"history up to {until:%Y-%m-%d %H:%M:%SZ} ({self.records} records, through "
            f"{self.through}) was compacted: its result is in the checkpoint, its records "
            "are gone"
        )


class HistoryCompacted(StoreError):
    """A replay needs records the log no longer holds. ``meanwhile``: because a compaction
    ran while it was under way; the same replay started again can succeed."""

    def __init__(self, mark: CompactionMark, why: str, *, meanwhile: bool = False) -> None:
        super().__init__(
            f"the log was compacted through {mark.through} ({mark.records} records); {why}"
        )
        self.mark = mark
        self.meanwhile = meanwhile


class Saved(StrEnum):
    SAVED = "saved"
    COVERED = "covered"  # the stored checkpoint reaches as far already: kept
    STALE = "stale"  # the log was compacted under the rebuild: dropped


class Checkpoints:
    def __init__(self, client: RedisClient, keys: WorkspaceKeys) -> None:
        self.redis = client
        self.keys = keys

    def save(self, image: Image, base: str | None) -> Saved:
        """Store ``image``, rebuilt from the checkpoint at ``base`` (None: from the start of
        the log), unless the stored checkpoint covers as much already (``COVERED``) or the
        log was compacted past ``base`` meanwhile, so that the rebuild may have missed
        records that were trimmed under it (``STALE``)."""
        if image.last_id is None:
            return Saved.COVERED
        # both only ever move on: when either holds already, the image need not be written
        if (known := self._settled(image.last_id, base)) is not None:
            return known
        text = image.to_json()
        with self.redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    pipe.watch(self.keys.checkpoint_at, self.keys.compacted)
                    through = pipe.hget(self.keys.compacted, "through")
                    if through is not None and (
                        base is None or id_order(str(through)) > id_order(base)
                    ):
                        pipe.unwatch()
                        return Saved.STALE
                    stored = pipe.get(self.keys.checkpoint_at)
                    if stored is not None and id_order(str(stored)) >= id_order(image.last_id):
                        pipe.unwatch()
                        return Saved.COVERED
                    pipe.multi()
                    pipe.set(self.keys.checkpoint, text)
                    pipe.set(self.keys.checkpoint_at, image.last_id)
                    pipe.execute()
                    return Saved.SAVED
                except WatchError as error:
                    if (cut := watch_broken(error)) is not None:
                        raise cut from error  # Redis went away, not a conflict

    def _settled(self, last_id: str, base: str | None) -> Saved | None:
        """STALE or COVERED as ``save`` would find them now (one round trip), else None."""
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(self.keys.compacted, "through")
            pipe.get(self.keys.checkpoint_at)
            through, stored = pipe.execute()
        if through is not None and (base is None or id_order(str(through)) > id_order(base)):
            return Saved.STALE
        if stored is not None and id_order(str(stored)) >= id_order(last_id):
            return Saved.COVERED
        return None

    def mark(self) -> CompactionMark | None:
        """How far the log was compacted, or None when it never was."""
        fields = {str(k): str(v) for k, v in self.redis.hgetall(self.keys.compacted).items()}
        if "through" not in fields:
            return None
        return CompactionMark(
            fields["through"], int(fields["records"]), int(fields["at"]), fields.get("chain")
        )

    def reaches(self) -> str | None:
        """The last log id the checkpoint covers (None: there is none), without loading it."""
        last = self.redis.get(self.keys.checkpoint_at)
        return None if last is None else str(last)

    def load(self) -> Image | None:
        """The latest checkpoint; an unreadable one is logged and ignored (replay starts over)."""
        raw = self.redis.get(self.keys.checkpoint)
        if raw is None:
            return None
        try:
            return Image.from_json(str(raw))
        except (ValueError, KeyError, TypeError) as exc:  # ValidationError is a ValueError
            _log.warning("ignoring unreadable checkpoint %s: %s", self.keys.checkpoint, exc)
            return None
