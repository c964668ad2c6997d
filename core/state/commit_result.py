"""What a commit comes to: committed (with the version it produced) or rejected (with the
reason and the latest entry). The gateway adds a third answer, pending (core.gateway.outcome)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Any, ClassVar

from pydantic import JsonValue

from core.state.entry import Entry
from core.state.mutation import Mutation

__all__ = ["Committed", "RejectReason", "Rejected", "outcome_fields"]


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


@dataclass(frozen=True)
class Committed:
    """A commit, as the store answered it. ``duplicate``: the mutation id was seen before and
    this is its first result, returned again; nothing was written.

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

    name: ClassVar[str] = "committed"

    def to_dict(self) -> dict[str, Any]:
        return outcome_fields(self.name, self.request) | {
            "version": self.version,
            "entry": self.entry.model_dump(mode="json", by_alias=True) if self.entry else None,
            "logId": self.log_id,
            "duplicate": self.duplicate,
        }


@dataclass(frozen=True)
class Rejected:
    mutation: Mutation
    reason: RejectReason
    message: str
    latest: Entry | None = None
    version: int | None = None
    retry_after_ms: int | None = None

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
