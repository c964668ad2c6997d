"""The chain's head, signed to be kept somewhere Redis's writers cannot reach (a ticket, a
commit message, another system's log), and checked later against the log: a head that is
still on the chain (the newest one, or an older one) holds; a forged one, or one the log no
longer leads to (rewritten, cut back), is refused.

The head names where the chain started when it was signed (the start's digest: genesis, or
the compaction mark's) and the state at its record (``Image.digest``). While the start is
the same, the link alone confirms everything from the start to the head. When the start
moved (a compaction since, or a forged one), the state at the head's record is rebuilt from
the checkpoint now vouched for and must be the one signed: a forged mark or checkpoint that
changes it is refused.

The signature is HMAC-SHA256 under the key in ``$DELIBERATE_LOG_SIGNING_KEY`` over
``deliberate log head v2``, the workspace, the record's log id, its number, its hash, the
start's digest, the state's and the compaction mark's ``through`` ('' for none), one a line
(v1, from an older release: the first five lines alone)."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from core.errors import StoreError
from core.state.chain.links import Link, parse_link
from core.state.chain.verify import ChainReport, raw_rows
from core.state.keys import WorkspaceKeys
from core.state.streams import id_order

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["SIGNING_KEY_ENV", "Head", "HeadCheck", "check_head", "signing_key"]

SIGNING_KEY_ENV = "DELIBERATE_LOG_SIGNING_KEY"
_V1, _V2 = "deliberate log head v1", "deliberate log head v2"
_HEX40 = re.compile(r"[0-9a-f]{40}")
_LOG_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")


def signing_key() -> bytes | None:
    """The signing key from the environment (None when unset or empty)."""
    key = os.environ.get(SIGNING_KEY_ENV, "")
    return key.encode() if key else None


@dataclass(frozen=True)
class Head:
    """``start`` and ``state``: the start's digest and the state's at the record (None both
    in a head an older release signed); ``compacted``: the compaction mark's ``through``
    then (None: never compacted)."""

    workspace: str
    link: Link
    signature: str | None = None
    start: str | None = None
    state: str | None = None
    compacted: str | None = None

    def _message(self) -> bytes:
        link = self.link
        lines = [self.workspace, link.log_id, str(link.n), link.hash]
        if self.start is None:
            return "\n".join([_V1, *lines]).encode()
        since = [self.start, self.state or "", self.compacted or ""]
        return "\n".join([_V2, *lines, *since]).encode()

    def signed(self, key: bytes) -> Head:
        return replace(self, signature=hmac.new(key, self._message(), hashlib.sha256).hexdigest())

    def signature_ok(self, key: bytes) -> bool:
        if self.signature is None:
            return False
        return hmac.compare_digest(self.signed(key).signature or "", self.signature)

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "workspace": self.workspace,
            "logId": self.link.log_id,
            "count": self.link.n,
            "hash": self.link.hash,
        }
        if self.start is not None:
            data.update(start=self.start, state=self.state, compacted=self.compacted)
        if self.signature is not None:
            data.update(alg="HMAC-SHA256", sig=self.signature)
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Head:
        """``ValueError`` naming what is wrong with a saved head."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"a head is a JSON object: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError("a head is a JSON object")
        missing = [k for k in ("workspace", "logId", "count", "hash") if k not in data]
        if missing:
            raise ValueError(f"the head has no {', '.join(missing)}")
        if not _LOG_ID.fullmatch(str(data["logId"])):
            raise ValueError(f"the head's logId {str(data['logId'])[:40]!r} is no log id")
        link = parse_link(str(data["logId"]), f"{data['count']}:{data['hash']}")
        if link is None or not isinstance(data["count"], int):
            raise ValueError("the head's count and hash are not a record number and 40 hex digits")
        sig = data.get("sig")
        start, state = data.get("start"), data.get("state")
        if (start is None) != (state is None):
            raise ValueError("the head has a start without a state, or a state without a start")
        for name, digest in (("start", start), ("state", state)):
            if digest is not None and not _HEX40.fullmatch(str(digest)):
                raise ValueError(f"the head's {name} is not 40 hex digits")
        compacted = data.get("compacted")
        if compacted is not None and (start is None or not _LOG_ID.fullmatch(str(compacted))):
            raise ValueError(f"the head's compacted {str(compacted)[:40]!r} is no log id")
        return cls(
            str(data["workspace"]),
            link,
            None if sig is None else str(sig),
            None if start is None else str(start),
            None if state is None else str(state),
            None if compacted is None else str(compacted),
        )


@dataclass(frozen=True)
class HeadCheck:
    """Whether a saved head is on the chain (``ok``), and what was found, in a sentence."""

    ok: bool
    says: str


def check_head(
    client: RedisClient,
    keys: WorkspaceKeys,
    head: Head,
    report: ChainReport,
    state_at: Callable[[Link], str],
) -> HeadCheck:
    """Is ``head`` a link of the chain ``report`` verified (so the log still leads to it),
    from the start it names, or from a later one that rebuilds the state it names at its
    record (``state_at``: that digest, rebuilt)? The signature is the caller's to check."""
    link = head.link
    if head.workspace != keys.workspace:
        return HeadCheck(False, f"the head is of workspace {head.workspace!r}, not this one")
    if not report.ok:
        return HeadCheck(False, "the chain itself is broken, so no head can be confirmed on it")
    found = _field_of(client, keys, link.log_id)
    if found is not None:
        if found == link.field:
            return _from_start(head, report, state_at)
        return HeadCheck(
            False,
            f"the log's record {link.log_id} is {found or 'unchained'}, not the head's "
            f"{link.field}: this head was never on this chain, or the log was rewritten",
        )
    mark = report.origin.mark
    if mark is not None and mark.through == link.log_id and mark.chain is not None:
        if mark.chain == link.field:  # the link is kept, the records and state are not on it
            return HeadCheck(
                False,
                f"record {link.n} ({link.log_id}) was the last compacted: its link matches, but "
                "what it vouched for is now the checkpoint, which holds no state to compare "
                "at it; anchor a newer head",
            )
        return HeadCheck(
            False, f"the compacted record {link.log_id} is {mark.chain}, not the head's"
        )
    if mark is not None and id_order(link.log_id) <= id_order(mark.through):
        return HeadCheck(
            False,
            f"record {link.log_id} was compacted away, and only the link of the last record "
            f"compacted ({mark.through}) is kept: this head can no longer be confirmed",
        )
    last = report.last
    where = (
        "holds no chained record" if last is None else f"ends at record {last.n} ({last.log_id})"
    )
    return HeadCheck(
        False,
        f"record {link.n} ({link.log_id}) is not in the log, which {where}: the head was "
        "forged, or the log was cut back",
    )


def _from_start(head: Head, report: ChainReport, state_at: Callable[[Link], str]) -> HeadCheck:
    """The head's record is on the chain: does the start it names still lead to it?"""
    link, origin = head.link, report.origin
    on = f"record {link.n} ({link.log_id}) is on the chain"
    mark = origin.mark
    moved = "" if mark is None else f" (the log is now compacted through {mark.through})"
    if head.start is None:
        if mark is None:
            return HeadCheck(True, f"{on}, which starts at record 1 (a head of an older release)")
        return HeadCheck(
            False,
            f"{on}, but the head, signed by an older release, names no start, and the log "
            f"was compacted{moved}: what was compacted cannot be confirmed against it; sign "
            "a new head ('deliberate log head')",
        )
    if head.start == origin.digest():
        return HeadCheck(True, f"{on}, from the start the head names")
    now = None if mark is None else mark.through
    if head.compacted is not None and (now is None or id_order(now) <= id_order(head.compacted)):
        if now == head.compacted:
            return HeadCheck(
                False,
                f"{on}, but the compaction mark (through {now}) is not the one the head "
                "names: it was changed since the head was signed",
            )
        return HeadCheck(
            False,
            f"{on}, but the log's start moved back since the head was signed (compacted "
            f"through {head.compacted} then, {'never' if now is None else 'through ' + now} "
            "now): the compaction mark was forged or removed",
        )
    try:
        state = state_at(link)
    except StoreError as exc:
        return HeadCheck(
            False,
            f"{on}, but the log's start changed since the head was signed{moved}, and the "
            f"state at record {link.n} cannot be rebuilt from it: {exc}",
        )
    if state == head.state:
        return HeadCheck(
            True,
            f"{on}; the log's start moved since the head was signed{moved}, and the state at "
            f"record {link.n}, rebuilt from the checkpoint, is the one the head was signed on",
        )
    return HeadCheck(
        False,
        f"{on}, but the log's start changed since the head was signed{moved}, and the "
        f"state at record {link.n} rebuilt from it is not the one the head was signed on: "
        "the compaction mark or the checkpoint was forged",
    )


def _field_of(client: RedisClient, keys: WorkspaceKeys, log_id: str) -> str | None:
    """The chain field of record ``log_id`` ('' when it has none); None when it is absent."""
    for row_id, fields in raw_rows(client, keys.log, log_id, batch=1):
        if row_id != log_id:
            return None
        return fields.get(b"chain", b"").decode(errors="replace")
    return None
