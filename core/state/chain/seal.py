"""Sealing: vouching once for a start of the log that an older release left unvouched.

Two such starts exist: records written before the log was chained, ahead of its first
chained record, which nothing vouches for (and which a record planted there looks like); and
a compaction mark written before marks carried the checkpoint's SHA-1. Sealing checks the
log first, as ``replay --verify`` does: the chain from the start onwards, and the state
rebuilt from the checkpoint (or from nothing) and every record, unchained ones included,
against the live snapshot. Only when both hold does it write, in one step (trim_log.lua): the
unchained records compacted into the checkpoint, and a mark that vouches for it. A record
planted at the start that the live state does not bear out is refused, never sealed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.state.chain.links import CHAIN_FIELD
from core.state.chain.start import Follow, Start, read_start
from core.state.checkpoints import Image
from core.state.compaction import Compactor, Retention, trim
from core.state.mutation_log import LogRecord, MutationLog, UnreadableRecord
from core.state.replay import ReplayMismatch, apply, compare
from core.state.streams import id_order, raw_range

if TYPE_CHECKING:
    from core.state.store import StateStore

__all__ = ["Sealed", "seal"]


@dataclass(frozen=True)
class Sealed:
    """What sealing did (``done``: the start is vouched for now, or was already), in a
    sentence."""

    done: bool
    says: str


@dataclass
class _Walked:
    """The log read for sealing: the state rebuilt, the records written before the chain
    (``prefix``: how many, the last one's id) and the checkpoint as it stood after them."""

    image: Image
    prefix: int = 0
    prefix_last: str | None = None
    at_seal: str | None = None  # the image's JSON once the prefix was applied
    covers: str | None = None  # the last log id that image holds


def seal(store: StateStore) -> Sealed:
    """Seal the log's start when an older release left it unvouched; say what was done."""
    compactor = Compactor(store, Retention())
    with compactor.locked() as held:
        if not held:
            return Sealed(False, "another process is compacting this workspace; try again")
        return _seal(store, compactor)


def _seal(store: StateStore, compactor: Compactor) -> Sealed:
    start = read_start(store.redis, store.keys)
    problem = start.problem()
    if problem is not None and not problem.unsealed:
        return Sealed(
            False,
            f"the log's start does not verify ({problem}): sealing vouches only for what an "
            "older release left, never for a start changed since; nothing sealed",
        )
    if problem is None and not _unchained_first(store):
        return Sealed(True, "nothing to seal: the log's start is vouched for already")
    base = _base(start)
    if isinstance(base, Sealed):
        return base
    live = store.snapshot()
    walked = _walk(store, start, Image.from_json(base.to_json()), live.last_log_id)
    if isinstance(walked, Sealed):
        return walked
    diffs = compare(live, walked.image)
    if diffs:
        shown = "; ".join(str(d) for d in diffs[:3])
        return Sealed(
            False,
            f"the log does not rebuild the live state ({len(diffs)} key(s) differ: {shown}); "
            "nothing sealed",
        )
    return _write(store, compactor, start, base, walked)


def _unchained_first(store: StateStore) -> bool:
    """Whether the log's first record carries no link of the chain."""
    first = raw_range(store.redis, store.keys.log, count=1)
    return bool(first) and b"chain" not in first[0][1]


def _base(start: Start) -> Image | Sealed:
    """The state the log's records apply to: the checkpoint of an older release's mark
    (unvouched, checked against the live state below), or nothing."""
    mark = start.mark
    if mark is None:
        return Image()
    try:
        image = Image.from_json(start.text or "")
    except (ValueError, KeyError, TypeError):  # ValidationError is a ValueError
        return Sealed(False, "the checkpoint is missing or cannot be read; nothing sealed")
    if image.last_id is None or id_order(image.last_id) < id_order(mark.through):
        return Sealed(False, f"the checkpoint does not reach {mark.through}; nothing sealed")
    return image


def _walk(store: StateStore, start: Start, image: Image, until: str | None) -> _Walked | Sealed:
    """Rebuild the state through ``until`` from ``image``, the unchained records ahead of
    the chain's first record taken as they are, every other one checked on the chain."""
    walked, follow = _Walked(image), Follow(start)
    covered = image.last_id
    mark = start.mark  # records before the chain: only ahead of its record 1, by an older release
    unchained_allowed = start.base is None and (mark is None or not mark.sealed)
    for log_id, fields in MutationLog(store.redis, store.keys).raw_rows(until=until):
        if unchained_allowed and CHAIN_FIELD not in fields:
            walked.prefix += 1
            walked.prefix_last = log_id
        else:
            if walked.prefix and walked.at_seal is None:
                walked.at_seal, walked.covers = walked.image.to_json(), walked.image.last_id
            unchained_allowed = False
            if (broken := follow.raw(log_id, fields)) is not None:
                return Sealed(False, f"the log's hash chain breaks at {broken}; nothing sealed")
        if covered is not None and id_order(log_id) <= id_order(covered):
            continue
        try:
            apply(walked.image, LogRecord.from_raw(log_id, fields))
        except (ReplayMismatch, UnreadableRecord) as exc:
            return Sealed(False, f"the log does not replay: {exc}; nothing sealed")
    if walked.prefix and walked.at_seal is None:
        return Sealed(
            False,
            f"no record of the log is chained yet ({walked.prefix} held): the next commit "
            "starts the chain; seal after it",
        )
    return walked


def _write(
    store: StateStore, compactor: Compactor, start: Start, base: Image, walked: _Walked
) -> Sealed:
    mark = start.mark
    marked = "" if mark is None else mark.through
    if walked.prefix_last is None:  # an older release's mark alone: vouch for its checkpoint
        assert mark is not None and base.last_id is not None
        through, text, covers = mark.through, start.text or "", base.last_id
    else:
        kept, why = compactor.kept_from()
        if id_order(walked.prefix_last) >= id_order(kept):
            return Sealed(False, f"the records before the chain must stay for now: {why}")
        through, text = walked.prefix_last, walked.at_seal or ""
        covers = walked.covers or through
    trimmed = trim(store.redis, store.keys, through, text, covers, marked, seal=True)
    if trimmed < 0:
        return Sealed(False, "another compaction moved the log's start meanwhile; try again")
    if walked.prefix_last is None:
        return Sealed(
            True,
            f"sealed: the compaction mark (through {through}) now vouches for the checkpoint, "
            "checked against the live state",
        )
    return Sealed(
        True,
        f"sealed: the {walked.prefix} record(s) written before the log was chained (through "
        f"{through}) were compacted into the checkpoint, checked against the live state, "
        "which the compaction mark now vouches for",
    )
