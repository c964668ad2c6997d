"""A mutation: one typed request to change one key of canonical state."""

from __future__ import annotations

import itertools
import os
from enum import StrEnum
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator
from pydantic.alias_generators import to_camel

from core.actor import Actor
from core.compact import dumps
from core.keys import validate_state_key

__all__ = ["Mutation", "Op", "new_id"]


class _Ids:
    """128-bit ids: 64 random bits per process, then a counter. Cheaper than uuid4 (one
    syscall per process, not per id); re-seeded in a forked child so ids never repeat."""

    def __init__(self) -> None:
        self.reseed()
        os.register_at_fork(after_in_child=self.reseed)

    def reseed(self) -> None:
        self.prefix = os.urandom(8).hex()
        self.counter = itertools.count(int.from_bytes(os.urandom(4)))

    def next(self) -> str:
        return f"{self.prefix}{next(self.counter) & 0xFFFF_FFFF_FFFF_FFFF:016x}"


_ids = _Ids()


def new_id() -> str:
    return _ids.next()


class Op(StrEnum):
    SET = "set"
    DELETE = "delete"
    APPEND = "append"
    INCR = "incr"


class Mutation(BaseModel):
    """``value`` is the new value for set, the item for append, the delta for incr, None for
    delete. ``ts`` is stamped by the store at commit (server clock, milliseconds)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    id: str = Field(default_factory=new_id, min_length=1, max_length=128, pattern=r"^\S+$")
    op: Op
    key: str
    value: JsonValue = None
    actor: Actor
    reason: str = Field(default="", max_length=1000)
    expected_version: int | None = Field(default=None, ge=0)
    ttl_sec: float | None = Field(default=None, gt=0, le=10 * 365 * 86400)
    ts: int | None = None
    correlation_id: str = Field(default_factory=new_id, min_length=1, max_length=128)
    causation_id: str | None = None
    proposed_by: Actor | None = None
    meta: dict[str, JsonValue] = Field(default_factory=dict)

    @field_validator("key")
    @classmethod
    def _key_is_valid(cls, key: str) -> str:
        return validate_state_key(key)

    @model_validator(mode="before")
    @classmethod
    def _incr_defaults_to_one(cls, data: Any) -> Any:
        if (
            isinstance(data, dict)
            and data.get("op") in ("incr", Op.INCR)
            and (data.get("value") is None)
        ):
            return {**data, "value": 1}
        return data

    @model_validator(mode="after")
    def _value_fits_op(self) -> Self:
        if self.op is Op.DELETE and self.value is not None:
            raise ValueError("delete takes no value")
        if self.op is Op.INCR and (
            isinstance(self.value, bool) or not isinstance(self.value, int | float)
        ):
            raise ValueError("incr takes a number (the amount to add)")
        return self

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, exclude_none=True)

    def value_json(self) -> str:
        """The value as compact JSON: the one encoding the store keeps (and appends to)."""
        return dumps(self.value)

    def with_changes(self, **changes: Any) -> Mutation:
        """A validated copy with some fields replaced."""
        data = self.model_dump()
        data.update(changes)
        return Mutation.model_validate(data)
