"""Walking the log's hash chain from where it starts to the chain's head, byte for byte as
the stream holds the records, to the first record that breaks it.

Where it starts (start.py): at record 1, or after the link the compaction mark kept, which
must also vouch for the checkpoint; nothing may come before the first chained record. A log
that holds records and no link at all (written before commit.lua chained them, or stripped)
is counted and named, neither verified nor broken. Where it ends: the head commit.lua keeps
(``{ws:<id>}:chain``) must be the last record walked, or records were cut off the end."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.state.chain.links import CHAIN_FIELD, Link, parse_link
from core.state.chain.start import SEAL_HINT, Break, Follow, Start, described, read_start
from core.state.keys import WorkspaceKeys
from core.state.streams import raw_rows

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["Break", "ChainReport", "raw_rows", "stored_head", "verify_chain"]


@dataclass(frozen=True)
class ChainReport:
    """``records``: records read; ``unchained``: those read while none was chained (a log
    no link vouches for); ``origin``: where the chain starts; ``first``: the first chained
    record the log holds; ``last``: the last link verified (the chain's head when
    ``broken`` is None)."""

    records: int
    unchained: int
    origin: Start
    first: Link | None
    last: Link | None
    broken: Break | None

    @property
    def ok(self) -> bool:
        return self.broken is None

    @property
    def base(self) -> Link | None:
        """The compacted link the chain continues from (None: it starts at record 1)."""
        return self.origin.base

    def start(self) -> str:
        """Where the chain starts, in a sentence."""
        return described(self.origin, self.first)


def stored_head(client: RedisClient, keys: WorkspaceKeys) -> Link | None:
    """The chain's head as commit.lua keeps it (None: nothing chained yet, or unreadable)."""
    n, hash_, log_id = client.hmget(keys.chain, ["n", "hash", "id"])
    if n is None or hash_ is None or log_id is None:
        return None
    return parse_link(str(log_id), f"{n!s}:{hash_!s}")


class _Walk:
    def __init__(self, start: Start, head: Link | None) -> None:
        self.follow = Follow(start)
        self.unchained = 0
        self.unchained_first: str | None = None
        self.head = head
        self.at_head: Link | None = None

    def step(self, log_id: str, fields: dict[bytes, bytes]) -> Break | None:
        follow = self.follow
        if follow.first is None and follow.start.mark is None and CHAIN_FIELD not in fields:
            follow.records += 1  # nothing chained yet: counted, judged at the first link
            self.unchained += 1
            self.unchained_first = self.unchained_first or log_id
            return None
        if self.unchained_first is not None:
            follow.records += 1
            field = fields[CHAIN_FIELD].decode(errors="replace")
            follow.first = parse_link(log_id, field)
            others = self.unchained - 1
            what = (
                f", nor do the {others} other record(s) after it, and all come"
                if others
                else " and comes"
            )
            return Break(
                self.unchained_first,
                f"carries no chain hash{what} before {log_id}, the chain's first record, "
                "where nothing may: planted, or written by a release older than the chain "
                f"(then {SEAL_HINT})",
            )
        broken = follow.raw(log_id, fields)
        if broken is None and self.head is not None and log_id == self.head.log_id:
            self.at_head = follow.last
        return broken

    def end(self, keys: WorkspaceKeys) -> Break | None:
        """The last link walked against the head commit.lua keeps."""
        last, head = self.follow.last, self.head
        if self.follow.first is None:
            last = None  # the compacted link is no record of the log
        if head is None:
            if last is None:
                return None
            return Break(
                keys.chain,
                f"the chain's head is missing, though the log holds "
                f"records up to {last.n} ({last.log_id})",
            )
        if last is None or head.n > last.n:
            ends = (
                "holds no chained record"
                if last is None
                else f"ends at record {last.n} ({last.log_id})"
            )
            return Break(
                head.log_id,
                f"record {head.n}, the chain's head, is gone: the log {ends}, so its newest "
                "record(s) were deleted",
            )
        if head.n < last.n and self.at_head == head:
            return None  # records committed while the walk went on: verified with the rest
        if head != last:
            return Break(
                last.log_id,
                f"record {last.n} differs from the chain's head "
                f"({head.n}, {head.log_id}): the head or the log was rewritten",
            )
        return None


def verify_chain(
    client: RedisClient, keys: WorkspaceKeys, batch: int = 1000, attempts: int = 3
) -> ChainReport:
    """Walk the whole chain from its start; the report names the first break, if any. A
    break seen while a compaction trimmed the log under the walk is walked again
    (``attempts`` in all)."""
    start = read_start(client, keys)
    report = _walked(client, keys, start, batch)
    if report.ok or attempts <= 1 or read_start(client, keys).mark == start.mark:
        return report
    return verify_chain(client, keys, batch, attempts - 1)


def _walked(client: RedisClient, keys: WorkspaceKeys, start: Start, batch: int) -> ChainReport:
    # the head is read first: records committed during the walk come after it, walked too
    walk = _Walk(start, stored_head(client, keys))
    broken = start.problem()
    if broken is None:
        for log_id, fields in raw_rows(client, keys.log, batch=batch):
            if (broken := walk.step(log_id, fields)) is not None:
                break
        else:
            broken = walk.end(keys)
    follow = walk.follow
    last = follow.last if follow.first is not None else None
    return ChainReport(follow.records, walk.unchained, start, follow.first, last, broken)
