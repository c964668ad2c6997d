"""A state entry: the current value of one key, with its version and provenance; and a page
of them, as the key index lists them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue
from pydantic.alias_generators import to_camel

from core.state.actor import Actor

__all__ = ["Entry", "KeyPage"]


class Entry(BaseModel):
    """``updated_at`` and ``expires_at`` are epoch milliseconds of the Redis server clock."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    key: str
    value: JsonValue
    version: int = Field(ge=1)
    updated_at: int
    updated_by: Actor
    expires_at: int | None = None
    meta: dict[str, JsonValue] = Field(default_factory=dict)

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True)

    @classmethod
    def built(
        cls,
        key: str,
        value: JsonValue,
        version: int,
        updated_at: int,
        updated_by: Actor,
        expires_at: int | None,
        meta: dict[str, JsonValue],
    ) -> Entry:
        """An entry from fields validated already, every one given: what ``model_construct``
        makes (the same ``__dict__``, fields set, no extra, no private), without its walk
        over each field's aliases and defaults, four times slower. Replay builds one per
        record of the log."""
        entry = cls.__new__(cls)
        fields: dict[str, Any] = {
            "key": key,
            "value": value,
            "version": version,
            "updated_at": updated_at,
            "updated_by": updated_by,
            "expires_at": expires_at,
            "meta": meta,
        }
        _set(entry, "__dict__", fields)
        _set(entry, "__pydantic_fields_set__", set(_FIELDS))
        _set(entry, "__pydantic_extra__", None)
        _set(entry, "__pydantic_private__", None)
        return entry


_set = object.__setattr__  # as pydantic sets them on a frozen model
_FIELDS = frozenset(Entry.model_fields)


@dataclass(frozen=True)
class KeyPage:
    """One page of the key index (``StateStore.page``): its live entries, the key the next
    page starts after (None: this is the last), and how many keys of the index follow."""

    entries: list[Entry]
    after: str | None
    more: int
