"""How values, actors and entries are written to Redis fields and read back."""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import JsonValue

from core.state.actor import Actor
from core.state.entry import Entry
from core.state.mutation import Mutation

__all__ = ["entry_from_fields", "entry_meta", "text"]


def text(raw: bytes | str | None) -> str | None:
    if raw is None:
        return None
    return raw.decode() if isinstance(raw, bytes) else raw


def entry_meta(mutation: Mutation) -> dict[str, JsonValue]:
    """The provenance stored with an entry; replay derives the same from the logged mutation."""
    meta: dict[str, JsonValue] = dict(mutation.meta)
    meta["mutationId"] = mutation.id
    meta["correlationId"] = mutation.correlation_id
    if mutation.reason:
        meta["reason"] = mutation.reason
    if mutation.proposed_by is not None:
        meta["proposedBy"] = mutation.proposed_by.model_dump(mode="json")
    return meta


def entry_from_fields(
    key: str,
    version: int,
    fields: Mapping[str, bytes | str | None],
) -> Entry | None:
    """Build an entry from the hash fields (value, updatedAt, updatedBy, expiresAt, meta)."""
    value = text(fields.get("value"))
    if value is None:
        return None
    expires = text(fields.get("expiresAt"))
    return Entry(
        key=key,
        value=json.loads(value),
        version=version,
        updated_at=int(text(fields["updatedAt"]) or 0),
        updated_by=Actor.model_validate_json(text(fields["updatedBy"]) or "{}"),
        expires_at=int(expires) if expires else None,
        meta=json.loads(text(fields.get("meta")) or "{}"),
    )
