"""What a commit comes to: committed (with the version it produced) or rejected (with the
reason and the latest entry). The gateway adds a third answer, pending (core.gateway.outcome).

A retried mutation id is answered with its first result, rebuilt (``first_result``): an
idempotency record keeps only the log id and the version of the first commit and the id of
the request that made it, never the value (a large document would be copied for as long as
the record lasts). The value is rebuilt exactly when the key is still at that version or
the op was a set; by replaying the op on the log record's ``prev`` for incr and append; and
not at all when neither is there (the record was compacted away, or its ``prev`` was too
long to keep): then ``value_known`` is False."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Any, ClassVar

from pydantic import JsonValue

from core.errors import StoreError
from core.state.codec import entry_meta
from core.state.entry import Entry
from core.state.mutation import Mutation, Op
from core.state.streams import stream_ms
from core.state.value_json import dumps

__all__ = [
    "Committed",
    "FirstCommit",
    "RejectReason",
    "Rejected",
    "first_result",
    "outcome_fields",
]


class RejectReason(StrEnum):
    NOT_ALLOWED = "not_allowed"  # no policy pattern matches the key
    SCHEMA = "schema"  # the value or ttl breaks the key's schema
    FORBIDDEN = "forbidden"  # the actor's roles may not write the key
    PROTECTED = "protected"  # protected key, and the actor is neither moderator nor admin
    AGENT_DENIED = "agent_denied"  # agents may not even propose this key
    CONFLICT = "conflict"  # expected version differs from the key's version
    NOT_FOUND = "not_found"  # delete of an absent key, or an unknown proposal
    TYPE = "type"  # incr on a non-number, append on a non-list
    RATE_LIMITED = "rate_limited"
    EXPIRED = "expired"  # a proposal applied past its deadline
    STALE = "stale"  # a proposal whose key moved past the version it was made against


@dataclass(frozen=True, init=False)
class Committed:
    """A commit, as the store answered it. ``duplicate``: the mutation id was seen before and
    this is its first result, returned again; nothing was written.

    ``value_known``: False on a duplicate whose value can no longer be told (its log record
    was compacted away, and the key has moved on): then ``value_json`` and ``entry`` are None
    though the key was not deleted.

    ``mutation`` (stamped with the commit's server time ``ts``) and ``entry`` (None after a
    delete) are built on first use: most callers never look, and every commit pays for what
    is built eagerly."""

    request: Mutation
    version: int
    log_id: str
    ts: int
    value_json: str | None
    expires_at: int | None
    meta: dict[str, JsonValue]
    duplicate: bool = False
    value_known: bool = True
    # what the key held before, as the log record keeps it (None: absent), when the commit
    # was asked to say (commit.lua's ARGV[19]) and the record keeps it whole
    prev_json: str | None = None
    prev_said: bool = False

    def __init__(
        self,
        request: Mutation,
        version: int,
        log_id: str,
        ts: int,
        value_json: str | None,
        expires_at: int | None,
        meta: dict[str, JsonValue],
        duplicate: bool = False,
        value_known: bool = True,
        prev_json: str | None = None,
        prev_said: bool = False,
    ) -> None:
        """What the dataclass's own ``__init__`` does, without its nine
        ``object.__setattr__`` (how a frozen dataclass sets a field): 15,300 instructions
        of every commit's client side, 5,700 this way (valgrind)."""
        fields = self.__dict__
        fields["request"] = request
        fields["version"] = version
        fields["log_id"] = log_id
        fields["ts"] = ts
        fields["value_json"] = value_json
        fields["expires_at"] = expires_at
        fields["meta"] = meta
        fields["duplicate"] = duplicate
        fields["value_known"] = value_known
        fields["prev_json"] = prev_json
        fields["prev_said"] = prev_said

    @cached_property
    def mutation(self) -> Mutation:
        return self.request.model_copy(update={"ts": self.ts})

    @cached_property
    def entry(self) -> Entry | None:
        if self.value_json is None:
            return None
        return Entry(
            key=self.request.key,
            value=json.loads(self.value_json),
            version=self.version,
            updated_at=self.ts,
            updated_by=self.request.actor,
            expires_at=self.expires_at,
            meta=self.meta,
        )

    @property
    def reverts_at(self) -> int | None:
        """When a change made for a while reverts by itself (None: made for good)."""
        return self.request.reverts_at(self.ts)

    name: ClassVar[str] = "committed"

    def to_dict(self) -> dict[str, Any]:
        reverts = self.reverts_at
        return (
            outcome_fields(self.name, self.request)
            | {
                "version": self.version,
                "entry": self.entry.model_dump(mode="json", by_alias=True) if self.entry else None,
                "logId": self.log_id,
                "duplicate": self.duplicate,
            }
            | ({} if self.value_known else {"valueKnown": False})
            | ({} if reverts is None else {"revertsAt": reverts})
        )


@dataclass(frozen=True)
class Rejected:
    mutation: Mutation
    reason: RejectReason
    message: str
    latest: Entry | None = None
    version: int | None = None
    retry_after_ms: int | None = None
    deadline: int | None = None  # a proposal refused as expired: its deadline (server ms)
    at: int | None = None  # a commit refused past its deadline: the server's clock then (ms)

    name: ClassVar[str] = "rejected"

    def to_dict(self) -> dict[str, Any]:
        return outcome_fields(self.name, self.mutation) | {
            "reason": self.reason.value,
            "message": self.message,
            "version": self.version,
            "latest": self.latest.model_dump(mode="json", by_alias=True) if self.latest else None,
            "retryAfterMs": self.retry_after_ms,
        }


def outcome_fields(outcome: str, mutation: Mutation) -> dict[str, Any]:
    return {
        "outcome": outcome,
        "key": mutation.key,
        "op": mutation.op.value,
        "mutationId": mutation.id,
        "correlationId": mutation.correlation_id,
    }


@dataclass(frozen=True)
class FirstCommit:
    """What the store holds about a mutation id's first commit. ``version`` is the
    idempotency record's (``v<n>``; an older release wrote the value there instead).
    ``mutation_json``, ``ts`` and ``expires_at`` are None when the log no longer holds its
    record; ``prev_json`` is None when the key was absent before or the record keeps only a
    hash of it (``prev_kept`` False). ``now_*``: the key as it is now, live or not."""

    log_id: str
    version: str
    mutation_json: str | None
    ts: str | None
    expires_at: str | None
    prev_json: str | None
    prev_kept: bool
    now_version: int
    now_value: str | None
    now_expires_at: str | None = None


def first_result(request: Mutation, first: FirstCommit) -> Committed:
    """The first commit's result, as a retry with ``request`` (same id) is answered. With
    its log record gone, only the record's version is trusted, never the retry's payload
    (an id reused for another change must not be answered with it)."""
    if not first.version.startswith("v"):  # an older release's record: <logId>\n<value>
        raise StoreError(
            f"mutation {request.id} was committed as {first.log_id}, which the log no longer holds"
        )
    version = int(first.version[1:])
    if first.mutation_json is None:
        return _unlogged(request, version, first)
    logged = Mutation.model_validate_json(first.mutation_json)
    value_json, known = _value(logged, version, first)
    expires = first.expires_at
    return Committed(
        logged,
        version,
        first.log_id,
        int(first.ts) if first.ts else stream_ms(first.log_id),
        value_json,
        int(expires) if expires else None,
        entry_meta(logged),
        duplicate=True,
        value_known=known,
    )


def _unlogged(request: Mutation, version: int, first: FirstCommit) -> Committed:
    """A first commit whose log record was compacted away: what it set is known only while
    the key is still at its version and present."""
    here = first.now_version == version and first.now_value is not None
    expires = first.now_expires_at if here else None
    return Committed(
        request,
        version,
        first.log_id,
        stream_ms(first.log_id),
        first.now_value if here else None,
        int(expires) if expires else None,
        entry_meta(request),
        duplicate=True,
        value_known=here,
    )


def _value(logged: Mutation, version: int, first: FirstCommit) -> tuple[str | None, bool]:
    if logged.op is Op.DELETE:
        return None, True
    if first.now_version == version and first.now_value is not None:
        return first.now_value, True
    if logged.op is Op.SET:
        return logged.value_json, True
    if not first.prev_kept:
        return None, False
    prev = None if first.prev_json is None else json.loads(first.prev_json)
    if logged.op is Op.INCR:
        start = prev if isinstance(prev, int | float) and not isinstance(prev, bool) else 0
        assert isinstance(logged.value, int | float)
        return dumps(start + logged.value), True
    items = prev if isinstance(prev, list) else []
    return dumps([*items, logged.value]), True
