"""Walking the log's hash chain from where it starts to the chain's head, byte for byte as
the stream holds the records, to the first record that breaks it.

Where it starts: after the link the compaction mark kept (the last record trimmed), else at
record 1. Records older than the chain (written before commit.lua chained them) carry no
hash: they are counted and named, never a break. Where it ends: the head commit.lua keeps
(``{ws:<id>}:chain``) must be the last record walked, or records were cut off the end."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from redis.client import NEVER_DECODE

from core.state.chain.links import CHAIN_FIELD, Link, genesis, link_hash, parse_link
from core.state.checkpoints import Checkpoints, CompactionMark
from core.state.keys import WorkspaceKeys

if TYPE_CHECKING:
    from core.redis_client import RedisClient

__all__ = ["Break", "ChainReport", "raw_rows", "stored_head", "verify_chain"]

RawRow = tuple[str, dict[bytes, bytes]]


@dataclass(frozen=True)
class Break:
    """Where the chain breaks: the record (or key) named, and why."""

    where: str
    why: str

    def __str__(self) -> str:
        return f"{self.where}: {self.why}"


@dataclass(frozen=True)
class ChainReport:
    """``records``: records read; ``unchained``: those before the chain started (older than
    it); ``base``: the compacted link it continued from (None: it starts at record 1);
    ``first``: the first chained record the log holds; ``last``: the last link verified
    (the chain's head when ``broken`` is None)."""

    records: int
    unchained: int
    base: Link | None
    first: Link | None
    last: Link | None
    broken: Break | None

    @property
    def ok(self) -> bool:
        return self.broken is None

    def start(self) -> str:
        """Where the chain starts, in a sentence."""
        older = ""
        if self.unchained:
            older = (
                f"; the {self.unchained} record(s) before it carry no hash "
                "(written before the log was chained)"
            )
        if self.base is not None:
            return (
                f"the chain continues from record {self.base.n} ({self.base.log_id}), "
                f"the last one compacted{older}"
            )
        if self.first is not None:
            return f"the chain starts at record 1 ({self.first.log_id}){older}"
        return f"no record is chained yet{older}"


def raw_rows(
    client: RedisClient, key: str, start: str = "-", batch: int = 1000
) -> Iterator[RawRow]:
    """The stream's rows from ``start``, with their fields as the bytes Redis holds."""
    while True:
        chunk = client.execute_command(  # type: ignore[no-untyped-call]
            "XRANGE", key, start, "+", "COUNT", batch, **{NEVER_DECODE: True}
        )
        for row_id, fields in chunk or []:
            yield row_id.decode(), fields
        if not chunk or len(chunk) < batch:
            return
        start = "(" + chunk[-1][0].decode()


def stored_head(client: RedisClient, keys: WorkspaceKeys) -> Link | None:
    """The chain's head as commit.lua keeps it (None: nothing chained yet, or unreadable)."""
    n, hash_, log_id = client.hmget(keys.chain, ["n", "hash", "id"])
    if n is None or hash_ is None or log_id is None:
        return None
    return parse_link(str(log_id), f"{n!s}:{hash_!s}")


class _Walk:
    def __init__(self, keys: WorkspaceKeys, mark: CompactionMark | None, head: Link | None) -> None:
        self.keys = keys
        self.base = (
            parse_link(mark.through, mark.chain) if mark is not None and mark.chain else None
        )
        self.last = self.base
        self.first: Link | None = None
        self.records = self.unchained = 0
        self.head = head
        self.at_head: Link | None = None

    def step(self, log_id: str, fields: dict[bytes, bytes]) -> Break | None:
        self.records += 1
        raw = fields.get(CHAIN_FIELD)
        if raw is None:
            if self.last is None:
                self.unchained += 1
                return None
            return Break(
                log_id,
                f"carries no chain hash, though record {self.last.n} "
                f"({self.last.log_id}) before it does",
            )
        link = parse_link(log_id, raw.decode(errors="replace"))
        if link is None:
            return Break(log_id, f"its chain field {raw[:60]!r} is not <n>:<40 hex digits>")
        due = 1 if self.last is None else self.last.n + 1
        if link.n != due:
            return Break(log_id, self._misnumbered(link, due))
        prev = genesis(self.keys.log) if self.last is None else self.last.hash
        if link_hash(prev, link.n, fields) != link.hash:
            before = (
                "the chain's start"
                if self.last is None
                else f"record {self.last.n} ({self.last.log_id})"
            )
            return Break(
                log_id,
                f"record {link.n}: its hash does not match its fields after {before}: "
                "the record was changed, or put in place of another",
            )
        self.first = self.first or link
        self.last = link
        if self.head is not None and log_id == self.head.log_id:
            self.at_head = link
        return None

    def _misnumbered(self, link: Link, due: int) -> str:
        after = (
            "the chain's start"
            if self.last is None
            else f"{self.last.log_id} (record {self.last.n})"
        )
        if link.n > due:
            gap = link.n - due
            return (
                f"is record {link.n} of the chain where {due} is due: {gap} record(s) after "
                f"{after} are missing (deleted)"
            )
        return f"is record {link.n} of the chain where {due} is due after {after}: out of place"

    def end(self) -> Break | None:
        """The last link walked against the head commit.lua keeps."""
        last, head = self.last, self.head
        if head is None:
            if last is None:
                return None
            return Break(
                self.keys.chain,
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
    """Walk the whole chain; the report names the first break, if any. A break seen while a
    compaction trimmed the log under the walk is walked again (``attempts`` in all)."""
    checkpoints = Checkpoints(client, keys)
    mark = checkpoints.mark()
    report = _walked(client, keys, mark, batch)
    if report.ok or attempts <= 1 or checkpoints.mark() == mark:
        return report
    return verify_chain(client, keys, batch, attempts - 1)


def _walked(
    client: RedisClient, keys: WorkspaceKeys, mark: CompactionMark | None, batch: int
) -> ChainReport:
    # the head is read first: records committed during the walk come after it, walked too
    walk = _Walk(keys, mark, stored_head(client, keys))
    broken = None
    if mark is not None and mark.chain and walk.base is None:
        broken = Break(keys.compacted, f"its chain link {mark.chain[:60]!r} is unreadable")
    if broken is None:
        for log_id, fields in raw_rows(client, keys.log, batch=batch):
            if (broken := walk.step(log_id, fields)) is not None:
                break
        else:
            broken = walk.end()
    return ChainReport(walk.records, walk.unchained, walk.base, walk.first, walk.last, broken)
