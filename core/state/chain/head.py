"""The chain's head, signed to be kept somewhere Redis's writers cannot reach (a ticket, a
commit message, another system's log), and checked later against the log: a head that is
still on the chain (the newest one, or an older one) holds; a forged one, or one the log no
longer leads to (rewritten, cut back), is refused.

The signature is HMAC-SHA256 under the key in ``$DELIBERATE_LOG_SIGNING_KEY`` over
``deliberate log head v1``, the workspace, the record's log id, its number and its hash,
one a line."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from core.state.chain.links import Link, parse_link
from core.state.chain.verify import ChainReport, raw_rows
from core.state.checkpoints import Checkpoints
from core.state.keys import WorkspaceKeys
from core.state.streams import id_order

if TYPE_CHECKING:
    from core.redis_client import RedisClient

__all__ = ["SIGNING_KEY_ENV", "Head", "HeadCheck", "check_head", "signing_key"]

SIGNING_KEY_ENV = "DELIBERATE_LOG_SIGNING_KEY"
_VERSION = "deliberate log head v1"


def signing_key() -> bytes | None:
    """The signing key from the environment (None when unset or empty)."""
    key = os.environ.get(SIGNING_KEY_ENV, "")
    return key.encode() if key else None


@dataclass(frozen=True)
class Head:
    workspace: str
    link: Link
    signature: str | None = None

    def _message(self) -> bytes:
        link = self.link
        return f"{_VERSION}\n{self.workspace}\n{link.log_id}\n{link.n}\n{link.hash}".encode()

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
        if not re.match(r"^[0-9]{1,20}-[0-9]{1,20}$", str(data["logId"])):
            raise ValueError(f"the head's logId {str(data['logId'])[:40]!r} is no log id")
        link = parse_link(str(data["logId"]), f"{data['count']}:{data['hash']}")
        if link is None or not isinstance(data["count"], int):
            raise ValueError("the head's count and hash are not a record number and 40 hex digits")
        sig = data.get("sig")
        return cls(str(data["workspace"]), link, None if sig is None else str(sig))


@dataclass(frozen=True)
class HeadCheck:
    """Whether a saved head is on the chain (``ok``), and what was found, in a sentence."""

    ok: bool
    says: str


def check_head(
    client: RedisClient, keys: WorkspaceKeys, head: Head, report: ChainReport
) -> HeadCheck:
    """Is ``head`` a link of the chain ``report`` verified (so the log still leads to it)?
    The signature is the caller's to check first."""
    link = head.link
    if head.workspace != keys.workspace:
        return HeadCheck(False, f"the head is of workspace {head.workspace!r}, not this one")
    if not report.ok:
        return HeadCheck(False, "the chain itself is broken, so no head can be confirmed on it")
    found = _field_of(client, keys, link.log_id)
    if found is not None:
        if found == link.field:
            return HeadCheck(True, f"record {link.n} ({link.log_id}) is on the chain")
        return HeadCheck(
            False,
            f"the log's record {link.log_id} is {found or 'unchained'}, not the head's "
            f"{link.field}: this head was never on this chain, or the log was rewritten",
        )
    mark = Checkpoints(client, keys).mark()
    if mark is not None and mark.through == link.log_id and mark.chain is not None:
        if mark.chain == link.field:  # the link is kept, the records and state are not on it
            return HeadCheck(
                False,
                f"record {link.n} ({link.log_id}) was the last compacted: its link matches, but "
                "what it vouched for is now the checkpoint, which the chain does not cover; "
                "anchor a newer head",
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


def _field_of(client: RedisClient, keys: WorkspaceKeys, log_id: str) -> str | None:
    """The chain field of record ``log_id`` ('' when it has none); None when it is absent."""
    for row_id, fields in raw_rows(client, keys.log, log_id, batch=1):
        if row_id != log_id:
            return None
        return fields.get(b"chain", b"").decode(errors="replace")
    return None
