"""Where the log's hash chain starts, and the rule that walks it from there.

The first record the log holds follows its start, and nothing else may come before it:

- never compacted: it is record 1, which follows the SHA-1 of the log's key (``genesis``);
  a record before it (with no hash, or another chain's) is planted, or was written by a
  release older than the chain (``deliberate log seal`` vouches for such records once);
- compacted: it follows the link the compaction mark kept (the last record trimmed), lies
  after the mark's ``through``, and the mark vouches for the checkpoint by its SHA-1, so
  that the state the trimmed records left is on the chain too. A mark an older release
  wrote vouches for no checkpoint: it is *unsealed* until ``deliberate log seal``.

Every record after the first carries the link due after the one before it (``Follow``).
The start's ``digest`` (genesis, or a digest of the mark's fields) is what a signed head
names, so a head refuses a log whose start changed under it."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import StoreError
from core.state.chain.links import CHAIN_FIELD, Link, genesis, link_hash, parse_link
from core.state.checkpoints import CompactionMark, Image
from core.state.keys import WorkspaceKeys
from core.state.streams import id_order

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = [
    "SEAL_HINT",
    "Break",
    "ChainBroken",
    "Follow",
    "Start",
    "described",
    "read_start",
    "vouched_base",
]

SEAL_HINT = (
    "'deliberate log seal' vouches for such a start once, after checking the log against "
    "the live state"
)
_DIGEST_VERSION = "deliberate chain start v1"
_NAMES = re.compile(r'\{"lastId": "([0-9]{1,20}-[0-9]{1,20})"')  # as Image.to_json begins


@dataclass(frozen=True)
class Break:
    """Where the chain breaks: the record (or key) named, and why. ``unsealed``: not a
    break seen, but a start nothing vouches for (an older release's compaction mark)."""

    where: str
    why: str
    unsealed: bool = False

    def __str__(self) -> str:
        return f"{self.where}: {self.why}"


class ChainBroken(StoreError):
    """The log does not verify where a reader needs it: nothing is answered from it."""

    said_in_full = True

    def __init__(self, broken: Break) -> None:
        what = "is not vouched for" if broken.unsealed else "does not verify"
        then = "" if broken.unsealed else "; see 'deliberate log verify'"
        super().__init__(
            f"the log's hash chain {what} at {broken}; nothing is answered from it{then}"
        )
        self.broken = broken


@dataclass(frozen=True)
class Start:
    """The log's start as read in one step: the compaction mark (None: never compacted),
    the checkpoint's text and its SHA-1, and the id it reaches (as the key beside it says,
    and as its text says)."""

    keys: WorkspaceKeys
    mark: CompactionMark | None
    checkpoint_sha: str | None = None
    checkpoint_at: str | None = None
    text: str | None = None
    names: str | None = None  # the log id the checkpoint's own text says it reaches
    unreadable: bool = False  # the mark holds counts that are no numbers

    @property
    def base(self) -> Link | None:
        """The link the first record follows: the last one compacted (None: genesis)."""
        mark = self.mark
        return None if mark is None or mark.chain is None else parse_link(mark.through, mark.chain)

    def digest(self) -> str:
        """What a signed head names: genesis, or the SHA-1 of the mark's fields."""
        mark = self.mark
        if mark is None:
            return genesis(self.keys.log)
        fields = (mark.first, mark.through, mark.records, mark.at_ms, mark.chain, mark.checkpoint)
        text = "\n".join(
            [_DIGEST_VERSION, self.keys.log, *("" if f is None else str(f) for f in fields)]
        )
        return hashlib.sha1(text.encode()).hexdigest()

    def problem(self) -> Break | None:
        """What is wrong with the start itself, before any record is read."""
        mark, keys = self.mark, self.keys
        if self.unreadable:
            return Break(keys.compacted, "the compaction mark's counts are not numbers")
        if mark is None:
            return None  # a checkpoint without a mark is never read: nothing vouches for it
        if mark.chain is not None and self.base is None:
            return Break(keys.compacted, f"its chain link {mark.chain[:60]!r} is unreadable")
        if not mark.sealed:
            return Break(
                keys.compacted,
                f"the compaction mark (through {mark.through}) was written by an older release: "
                "it vouches for no checkpoint, so nothing vouches for the state the compacted "
                f"records left; {SEAL_HINT}",
                unsealed=True,
            )
        if self.checkpoint_sha is None:
            return Break(
                keys.checkpoint,
                f"is missing, though the log was compacted through {mark.through}: nothing "
                "holds what the compacted records left",
            )
        if self.checkpoint_sha != mark.checkpoint:
            return Break(
                keys.checkpoint,
                f"its SHA-1 is {self.checkpoint_sha}, not the {mark.checkpoint} the compaction "
                "mark vouches for: the checkpoint was changed or replaced since the compaction",
            )
        if self.checkpoint_at is None or _later(mark.through, self.checkpoint_at):
            return Break(
                keys.checkpoint_at,
                f"says the checkpoint reaches {str(self.checkpoint_at)[:40]}, short of "
                f"{mark.through}, the last record compacted",
            )
        if self.names != self.checkpoint_at:
            return Break(
                keys.checkpoint,
                f"its image reaches {str(self.names)[:40]}, not {self.checkpoint_at}, where "
                f"{keys.checkpoint_at} says it does",
            )
        base = self.base
        if base is not None and mark.records < base.n:
            return Break(
                keys.compacted,
                f"counts {mark.records} record(s) compacted, though its link is record {base.n}",
            )
        if mark.first is not None and _later(mark.first, mark.through):
            return Break(keys.compacted, f"its first record {mark.first[:40]} is after its last")
        return None


def read_start(client: RedisClient, keys: WorkspaceKeys) -> Start:
    """The start, read in one transaction (one shard holds the workspace's keys), so that
    no compaction falls between the mark and the checkpoint it vouches for. The checkpoint's
    SHA-1 is taken here, not by Redis: hashing a large one there would hold up every other
    client for as long."""
    with client.pipeline(transaction=True) as pipe:
        pipe.hgetall(keys.compacted)
        pipe.get(keys.checkpoint_at)
        pipe.get(keys.checkpoint)
        flat, at, text = pipe.execute()
    fields = {str(k): str(v) for k, v in (flat or {}).items()}
    try:
        mark, unreadable = CompactionMark.from_fields(fields), False
    except ValueError:
        mark, unreadable = None, True
    sha = names = None
    if text is not None:
        text = str(text)
        sha = hashlib.sha1(text.encode()).hexdigest()
        named = _NAMES.match(text)
        names = named[1] if named else None
    return Start(
        keys,
        mark,
        sha,
        None if at is None else str(at),
        text,
        names,
        unreadable,
    )


def vouched_base(client: RedisClient, keys: WorkspaceKeys) -> tuple[Start, Image | None]:
    """The start and the checkpoint it vouches for (None: never compacted, replay starts at
    the log's first record). ``ChainBroken`` when the start does not verify."""
    start = read_start(client, keys)
    if (broken := start.problem()) is not None:
        raise ChainBroken(broken)
    mark = start.mark
    if mark is None:
        return start, None
    try:
        image = Image.from_json(start.text or "")
    except (ValueError, KeyError, TypeError) as exc:  # ValidationError is a ValueError
        raise ChainBroken(Break(keys.checkpoint, f"cannot be read: {str(exc)[:120]}")) from None
    if image.last_id != start.checkpoint_at:
        raise ChainBroken(
            Break(
                keys.checkpoint,
                f"its image reaches {str(image.last_id)[:40]}, not {start.checkpoint_at}, "
                "where the checkpoint says it does",
            )
        )
    return start, image


def _later(a: str, b: str) -> bool:
    try:
        return id_order(a) > id_order(b)
    except ValueError:
        return True


class Follow:
    """Checks records one after another from ``start``: the first must follow the start's
    link (and lie after the mark's ``through``), each next one the record before it. Replay
    runs it on every record it reads, as the stream holds it (bytes), so a record that holds
    takes a short way (its number and hash compared as bytes, no ``Link`` made); one that
    does not is looked at closely."""

    def __init__(self, start: Start) -> None:
        self.start = start
        base = start.base
        self._n, self._id = (0, "") if base is None else (base.n, base.log_id)
        self._hash = genesis(start.keys.log) if base is None else base.hash
        self._through = None if start.mark is None else start.mark.through
        self.first: Link | None = None
        self.records = 0

    @property
    def last(self) -> Link | None:
        """The last link checked (before any: the start's, None for genesis)."""
        return Link(self._id, self._n, self._hash) if self._id else None

    def raw(self, log_id: str, fields: Mapping[bytes, bytes]) -> Break | None:
        """Check one record as the stream holds it (bytes)."""
        field = fields.get(CHAIN_FIELD)
        if field is not None and self.first is not None:  # the way most records take
            n = self._n + 1
            number, _, hash_ = field.partition(b":")
            if number == b"%d" % n and link_hash(self._hash, n, fields).encode() == hash_:
                self.records += 1
                self._n, self._hash, self._id = n, hash_.decode(), log_id
                return None
        text = None if field is None else field.decode(errors="replace")
        return self._check(log_id, text, fields)

    def _check(self, log_id: str, field: str | None, raw: Mapping[bytes, bytes]) -> Break | None:
        self.records += 1
        if self.first is None and self._through is not None and not _later(log_id, self._through):
            return Break(
                log_id,
                f"lies at or before {self._through}, the last record compacted, where the log "
                "holds nothing once compacted: it was put there since",
            )
        if field is None:
            return Break(log_id, self._unchained())
        number, _, hash_ = field.partition(":")
        if not (
            len(hash_) == 40
            and 0 < len(number) < 20
            and number.isascii()
            and number.isdigit()
            and number[0] != "0"
        ):
            return Break(log_id, f"its chain field {field[:60]!r} is not <n>:<40 hex digits>")
        n, due = int(number), self._n + 1
        if n != due:
            return Break(log_id, self._misnumbered(Link(log_id, n, hash_), due))
        if link_hash(self._hash, n, raw) != hash_:
            if parse_link(log_id, field) is None:  # not 40 lower-case hex digits
                return Break(log_id, f"its chain field {field[:60]!r} is not <n>:<40 hex digits>")
            return Break(
                log_id,
                f"record {n}: its hash does not match its fields after {self._previous()}: "
                "the record was changed, or put in place of another",
            )
        if self.first is None:
            self.first = Link(log_id, n, hash_)
        self._n, self._hash, self._id = n, hash_, log_id
        return None

    def _previous(self) -> str:
        last = self.last
        if last is None:
            return "the chain's start"
        if self.first is None:
            return f"record {last.n} ({last.log_id}), the last one compacted"
        return f"record {last.n} ({last.log_id})"

    def _unchained(self) -> str:
        if not self._id:
            return (
                "carries no chain hash and comes before the chain's first record, where "
                "nothing may: it was planted, or written by a release older than the chain "
                f"(then {SEAL_HINT})"
            )
        return f"carries no chain hash, though {self._previous()} before it does"

    def _misnumbered(self, link: Link, due: int) -> str:
        after = self._previous()
        if link.n > due:
            gap = link.n - due
            gone = (
                "and no compaction mark says they were compacted" if not self._id else "(deleted)"
            )
            return (
                f"is record {link.n} of the chain where {due} is due: {gap} record(s) after "
                f"{after} are missing {gone}"
            )
        return f"is record {link.n} of the chain where {due} is due after {after}: out of place"


def described(start: Start, first: Link | None) -> str:
    """Where the chain starts, in a sentence (``first``: the first chained record held)."""
    mark, base = start.mark, start.base
    if mark is not None:
        since = (
            f"the checkpoint {mark.checkpoint[:12]}"
            if mark.checkpoint
            else "an unsealed checkpoint"
        )
        what = (
            f"record {base.n} ({base.log_id}), the last one compacted"
            if base is not None
            else f"{mark.through}, the last record compacted (none of them chained)"
        )
        return f"the chain continues from {what}: {mark.records} record(s) in {since}"
    if first is not None:
        return f"the chain starts at record 1 ({first.log_id})"
    return "no record is chained yet"
