"""How values, actors and entries are written to Redis fields and read back.

An entry is read under the limits it was written under (``MAX_DEPTH`` and strict JSON): one
that breaks them (an older version's, a planted one) raises ``UnreadableEntry`` naming its
key, so that a reader that must go on (a listing, a snapshot) can skip it and say so."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from pydantic import JsonValue, ValidationError

from core.errors import Unreadable
from core.state.actor import Actor
from core.state.entry import Entry
from core.state.mutation import Mutation
from core.state.value_json import MAX_BYTES, MAX_DEPTH, loads, nesting

__all__ = ["UnreadableEntry", "entry_from_fields", "entry_meta", "readable_entry", "text"]

log = logging.getLogger("deliberate.store")


class UnreadableEntry(Unreadable):
    """A state entry no reader can parse, named by its key."""

    def __init__(self, key: str, why: str) -> None:
        super().__init__("entry", key, why)
        self.key = key


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
    """Build an entry from the hash fields (value, updatedAt, updatedBy, expiresAt, meta);
    None when there is no value. ``UnreadableEntry`` when the fields are not an entry this
    program can read (a value nesting deeper than ``MAX_DEPTH`` among them)."""
    value = text(fields.get("value"))
    if value is None:
        return None
    try:
        expires = text(fields.get("expiresAt"))
        return Entry(
            key=key,
            value=_stored_json("value", value),
            version=version,
            updated_at=int(text(fields["updatedAt"]) or 0),
            updated_by=Actor.model_validate_json(text(fields["updatedBy"]) or "{}"),
            expires_at=int(expires) if expires else None,
            meta=_stored_json("meta", text(fields.get("meta")) or "{}"),
        )
    except KeyError as exc:
        raise UnreadableEntry(key, f"no {exc.args[0]} field") from None
    except (ValueError, RecursionError) as exc:  # pydantic's ValidationError included
        raise UnreadableEntry(key, _first_line(exc)) from None


def readable_entry(
    key: str,
    version: int,
    fields: Mapping[str, bytes | str | None],
    skipped: list[UnreadableEntry],
) -> Entry | None:
    """``entry_from_fields`` for a reader that must go on: an unreadable entry is logged,
    added to ``skipped`` and read as None."""
    try:
        return entry_from_fields(key, version, fields)
    except UnreadableEntry as exc:
        log.warning("%s; skipped", exc)
        skipped.append(exc)
        return None


def _stored_json(name: str, raw: str) -> JsonValue:
    """Stored JSON text as a value, within the limits a write is held to."""
    if len(raw) > MAX_BYTES // 4 and len(raw.encode()) > MAX_BYTES:
        raise ValueError(f"{name} takes {len(raw.encode())} bytes, more than {MAX_BYTES}")
    value: JsonValue = loads(raw)
    # a value nests no deeper than it has brackets: count them (fast) before walking it
    if raw.count("[") + raw.count("{") > MAX_DEPTH and nesting(value) > MAX_DEPTH:
        raise ValueError(f"{name} nests more than {MAX_DEPTH} levels deep")
    return value


def _first_line(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"{where + ': ' if where else ''}{first['msg']}"[:200]
    return (str(exc) or type(exc).__name__).splitlines()[0][:200]
