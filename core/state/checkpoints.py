"""The checkpoint: a snapshot image rebuilt from the log, with the last log id it covers,
written by a compaction (core/state/lua/trim_log.lua) in the same step as the trim, so that
replay starts there instead of at the beginning of the log.

Once the log was compacted, the checkpoint is the only record of the trimmed history's
result: the mark of the compaction says how far it reaches and carries its SHA-1, so that
the chain (core/state/chain/) vouches for it; nothing else writes it. Anyone who can write
to Redis can write a mark too, so what a checkpoint holds for a key is also checked against
the first record of that key after it, which says (``prev``, on the chain) what the key held
just before: ``held_before``."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from core.errors import StoreError
from core.state.entry import Entry
from core.state.keys import WorkspaceKeys
from core.state.streams import stream_ms
from core.state.value_json import dumps

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["Checkpoints", "CompactionMark", "HistoryCompacted", "Image", "held_before"]


@dataclass
class Image:
    """State rebuilt from the log: every entry ever set and not deleted (expired ones too,
    filtered by time when read), every key's version counter, the last applied log id.
    ``unconfirmed``: the keys read from a checkpoint that no record applied since has borne
    out yet (replay checks each one's first record against it: ``held_before``)."""

    entries: dict[str, Entry] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    last_id: str | None = None
    unconfirmed: set[str] = field(default_factory=set, compare=False, repr=False)

    def to_json(self) -> str:
        """One JSON object; each entry serialised by pydantic straight to JSON text (six
        times faster than a dict through ``json.dumps``)."""
        entries = ",".join(e.model_dump_json(by_alias=True) for e in self.entries.values())
        head = json.dumps({"lastId": self.last_id, "versions": self.versions})
        return f'{head[:-1]},"entries":[{entries}]}}'

    @classmethod
    def from_json(cls, raw: str) -> Image:
        data = json.loads(raw)
        entries = {e.key: e for e in map(Entry.model_validate, data["entries"])}
        versions = dict(data["versions"])
        return cls(entries, versions, data["lastId"], set(entries) | set(versions))

    def digest(self, at_ms: int) -> str:
        """SHA-1 of the state a read at ``at_ms`` would see (every key's version counter and
        the entries live then), as canonical JSON: the same whether the image was rebuilt
        from the start of the log or from a checkpoint that dropped what had expired."""
        live = [
            e.model_dump(mode="json", by_alias=True)
            for _, e in sorted(self.entries.items())
            if e.expires_at is None or e.expires_at > at_ms
        ]
        state = {"versions": dict(sorted(self.versions.items())), "entries": live}
        text = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha1(text.encode()).hexdigest()


def held_before(entry: Entry | None, prev_json: str | None, prev_sha1: str | None) -> bool:
    """Whether ``entry`` (None: absent, or expired) is what a log record says its key held
    just before it: ``prev_json``, its value as JSON (None: absent), or, for a long one, only
    ``prev_sha1``, the SHA-1 of the text commit.lua held (as ``dumps`` writes it, or as it
    writes a sum that is no integer: ``%.17g``)."""
    if entry is None:
        return prev_json is None and prev_sha1 is None
    if prev_sha1 is not None:
        value, texts = entry.value, [dumps(entry.value)]
        if isinstance(value, float):
            lua = format(value, ".17g")
            texts.append(lua if any(c in lua for c in ".en") else f"{lua}.0")
        return any(hashlib.sha1(t.encode()).hexdigest() == prev_sha1 for t in texts)
    if prev_json is None:
        return False
    try:  # (as JSON: commit.lua writes a sum as %.17g, which reads as the same number)
        return dumps(json.loads(prev_json)) == dumps(entry.value)
    except (ValueError, RecursionError):
        return False


@dataclass(frozen=True)
class CompactionMark:
    """The log was trimmed through ``through`` (inclusive): ``records`` records in all, from
    ``first`` on, the last time at ``at_ms``. The checkpoint holds their result; ``chain``
    (``<n>:<hash>``) links the hash chain of the records that remain to the ones that went,
    and ``checkpoint`` is the SHA-1 of the checkpoint's text, written with the trim, which
    vouches for the state the compacted records left (a mark written by an older release
    has neither ``first`` nor ``checkpoint``: it vouches for no checkpoint)."""

    through: str
    records: int
    at_ms: int
    chain: str | None = None  # the chain field of the record ``through``, if it had one
    first: str | None = None  # the first log id ever compacted
    checkpoint: str | None = None  # SHA-1 of the checkpoint's text

    @property
    def sealed(self) -> bool:
        """Whether the mark vouches for the checkpoint (written by this release's trim)."""
        return self.checkpoint is not None

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> CompactionMark | None:
        """The mark a hash holds (None when it holds none); ``ValueError`` when a count or a
        time in it is no number."""
        if "through" not in fields:
            return None
        return cls(
            fields["through"],
            int(fields["records"]),
            int(fields["at"]),
            fields.get("chain") or None,
            fields.get("first") or None,
            fields.get("checkpoint") or None,
        )

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

    said_in_full = True

    def __init__(self, mark: CompactionMark, why: str, *, meanwhile: bool = False) -> None:
        super().__init__(
            f"the log was compacted through {mark.through} ({mark.records} records); {why}"
        )
        self.mark = mark
        self.meanwhile = meanwhile


class Checkpoints:
    def __init__(self, client: RedisClient, keys: WorkspaceKeys) -> None:
        self.redis = client
        self.keys = keys

    def mark(self) -> CompactionMark | None:
        """How far the log was compacted, or None when it never was."""
        fields = {str(k): str(v) for k, v in self.redis.hgetall(self.keys.compacted).items()}
        return CompactionMark.from_fields(fields)

    def reaches(self) -> str | None:
        """The last log id the checkpoint covers (None: there is none), without loading it."""
        last = self.redis.get(self.keys.checkpoint_at)
        return None if last is None else str(last)
