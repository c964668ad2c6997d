"""A mutation: one typed request to change one key of canonical state."""

from __future__ import annotations

import hashlib
import itertools
import os
from enum import StrEnum
from functools import cached_property
from typing import Any, Self

from pydantic import ConfigDict, Field, JsonValue, model_validator
from pydantic.alias_generators import to_camel

from core.cached_models import Derived
from core.state.actor import Actor
from core.state.keys import validate_state_key
from core.state.value_json import MAX_DEPTH, dumps, fit, nesting

__all__ = ["MAX_TTL_SEC", "Mutation", "Op", "new_id", "revert_id", "whole_ms"]


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


def revert_id(mutation_id: str) -> str:
    """The mutation id of the revert of ``mutation_id``, the same for every attempt: it
    commits once (``core/gateway/reverts.py``)."""
    if len(mutation_id) <= 100:
        return f"revert-{mutation_id}"
    return "revert-" + hashlib.blake2s(mutation_id.encode(), digest_size=16).hexdigest()


def new_id() -> str:
    return _ids.next()


MAX_TTL_SEC = 10 * 365 * 86400


def whole_ms(sec: float) -> int:
    """A ttl or a ``for_sec`` in whole milliseconds, at least one (the commit script and
    replay count them the same way)."""
    return max(1, round(sec * 1000))


class Op(StrEnum):
    SET = "set"
    DELETE = "delete"
    APPEND = "append"
    INCR = "incr"


def _fits(mutation: Mutation) -> None:
    """What JSON in UTF-8 cannot carry is refused in the value and the meta: a number that
    is not finite, a lone surrogate (``value_json.fit``; pydantic refuses a lone surrogate in
    a ``str`` field, not in a ``JsonValue``). The value's JSON is kept: the policy measures
    it and the store sends it."""
    try:
        mutation.__dict__["value_json"] = fit(mutation.value)
    except ValueError as exc:
        raise ValueError(f"value {exc}") from None
    if mutation.meta:
        try:
            fit(mutation.meta)
        except ValueError as exc:
            raise ValueError(f"meta {exc}") from None


class Mutation(Derived):
    """``value`` is the new value for set, the item for append, the delta for incr, None for
    delete. ``for_sec``: how long the change lasts before a revert undoes it (None: for
    good). ``ts`` is stamped by the store at commit (server clock, milliseconds)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    id: str = Field(default_factory=new_id, min_length=1, max_length=128, pattern=r"^\S+$")
    op: Op
    key: str
    value: JsonValue = None
    actor: Actor
    reason: str = Field(default="", max_length=1000)
    expected_version: int | None = Field(default=None, ge=0)
    ttl_sec: float | None = Field(default=None, gt=0, le=MAX_TTL_SEC, allow_inf_nan=False)
    # a change for a while: reverted by itself this long after its commit (core/gateway/timed.py)
    for_sec: float | None = Field(default=None, gt=0, le=MAX_TTL_SEC, allow_inf_nan=False)
    ts: int | None = None
    correlation_id: str = Field(default_factory=new_id, min_length=1, max_length=128)
    causation_id: str | None = None
    proposed_by: Actor | None = None
    meta: dict[str, JsonValue] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _key_and_value_fit_op(self) -> Self:
        """One validator for what field types cannot say (every commit builds a mutation,
        replay validates every record of the log). After the fields: a mode="before"
        validator makes pydantic read a record's JSON into Python objects before validating
        them, 30% of replay's validation (``bench/instructions.py --replay``)."""
        validate_state_key(self.key)
        op, value = self.op, self.value
        depth = nesting(value)
        if depth > MAX_DEPTH:
            raise ValueError(f"value nests more than {MAX_DEPTH} levels deep")
        if self.meta and nesting(self.meta) > MAX_DEPTH:  # (empty: no deeper than one level)
            raise ValueError(f"meta nests more than {MAX_DEPTH} levels deep")
        _fits(self)
        if op is Op.SET:  # nothing below is about a set
            return self
        # an appended item nests one level deeper in the list it joins
        if op is Op.APPEND and depth + 1 > MAX_DEPTH:
            raise ValueError(
                f"value nests more than {MAX_DEPTH} levels deep in the list it is appended to"
            )
        if op is Op.DELETE and value is not None:
            raise ValueError("delete takes no value")
        if op is Op.DELETE and self.ttl_sec is not None:
            raise ValueError("delete takes no ttl")
        if op is Op.INCR:
            if value is None:  # (a frozen model: set as pydantic sets a field it validates)
                self.__dict__["value"] = 1
                self.__pydantic_fields_set__.add("value")
            elif isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError("incr takes a number (the amount to add)")
            self.__dict__.pop("value_json", None)  # (of None, before the 1)
        return self

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, exclude_none=True)

    @classmethod
    def from_log(cls, text: str | bytes, ts: int) -> Mutation:
        """A mutation as the log holds it (its JSON, as text or as UTF-8 bytes), validated,
        stamped with the ``ts`` it committed at: what ``model_copy(update={"ts": ts})`` of
        the validated one gives, without the copy (replay reads every record: the object is
        new, nobody holds it yet, and no derived value is cached on it)."""
        mutation = cls.model_validate_json(text)
        mutation.__dict__["ts"] = ts
        mutation.__pydantic_fields_set__.add("ts")
        return mutation

    @cached_property
    def value_json(self) -> str:
        """The value as compact JSON, encoded once: policy measures it, the store sends it."""
        return dumps(self.value)

    def reverts_at(self, ts: int | None) -> int | None:
        """When this change, committed at ``ts``, reverts (epoch ms of the Redis server's
        clock, as commit.lua counts it), or None: made for good."""
        if self.for_sec is None or ts is None:
            return None
        return ts + whole_ms(self.for_sec)

    def with_changes(self, **changes: Any) -> Mutation:
        """A validated copy with some fields replaced."""
        data = self.model_dump()
        data.update(changes)
        return Mutation.model_validate(data)
