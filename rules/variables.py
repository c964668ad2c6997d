"""What a rule's conditions and templates see: the live state of the workspace (``StateView``)
and the variables of one committed mutation. Shared by the engine and the worker."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import JsonValue

from core.cel.checks import Names
from core.gateway.secrecy import masked
from core.state.actor import Actor
from core.state.mutation import Mutation, Op
from core.state.mutation_log import LogRecord
from core.state.store import StateStore
from core.state.value_json import dumps

__all__ = [
    "NAMES",
    "StateView",
    "after_value",
    "live_values",
    "masked_variables",
    "same",
    "secrets_in_play",
    "variables",
    "was",
]


class StateView(Mapping[str, JsonValue]):
    """Canonical state as rules read it: values by key, absent keys read as null, loaded on
    first use (most mutations match no rule and never pay for the read)."""

    def __init__(self, load: Callable[[], Mapping[str, JsonValue]]) -> None:
        self._load = load
        self._values: Mapping[str, JsonValue] | None = None

    @classmethod
    def of(cls, values: Mapping[str, JsonValue]) -> StateView:
        return cls(lambda: values)

    @classmethod
    def of_store(cls, store: StateStore) -> StateView:
        """The store's live values, read on first use."""
        return cls(lambda: live_values(store))

    @property
    def is_loaded(self) -> bool:
        return self._values is not None

    @property
    def loaded(self) -> Mapping[str, JsonValue]:
        if self._values is None:
            self._values = self._load()
        return self._values

    def __getitem__(self, key: str) -> JsonValue:
        return self.loaded.get(key)

    def __iter__(self) -> Any:
        return iter(self.loaded)

    def __len__(self) -> int:
        return len(self.loaded)

    def __contains__(self, key: object) -> bool:
        return key in self.loaded


def live_values(store: StateStore) -> dict[str, JsonValue]:
    return {entry.key: entry.value for entry in store.entries()}


def same(a: JsonValue, b: JsonValue) -> bool:
    """JSON equality: ``1`` and ``true`` differ, ``1`` and ``1.0`` do not."""
    return bool(json.loads(dumps(a)) == json.loads(dumps(b))) and _kinds(a) == _kinds(b)


def _kinds(value: JsonValue) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def was(record: LogRecord, value: JsonValue) -> bool:
    """Whether the key held ``value`` before the mutation. A previous value too long for the
    log to keep whole is compared by the SHA-1 of its exact JSON text."""
    if record.prev_kept:
        return same(record.prev, value)
    return hashlib.sha1(dumps(value).encode()).hexdigest() == record.prev_sha1


def after_value(record: LogRecord) -> JsonValue:
    """The key's value once the mutation applied (null after a delete, and after an incr or
    append whose previous value the log did not keep whole)."""
    m, prev = record.mutation, record.prev
    if m.op is Op.SET:
        return m.value
    if m.op is Op.DELETE or not record.prev_kept:
        return None
    if m.op is Op.INCR:
        assert isinstance(m.value, int | float)
        return (prev if isinstance(prev, int | float) else 0) + m.value
    return [*(prev if isinstance(prev, list) else []), m.value]


# what ``variables`` adds to a mutation's own fields
_RECORD_FIELDS = frozenset({"prev", "prevKept", "after", "version", "logId", "ts"})

# what every trigger gives a condition and a template, with the fields of each (a field
# of the mutation may be absent: ``expectedVersion`` when it was not given)
NAMES: Names = {
    "state": None,  # any key
    "mutation": frozenset(f.alias or n for n, f in Mutation.model_fields.items()) | _RECORD_FIELDS,
    "actor": frozenset(f.alias or n for n, f in Actor.model_fields.items()),
}


def variables(record: LogRecord, state: Mapping[str, JsonValue]) -> dict[str, Any]:
    """What templates and CEL see: ``state``, ``mutation`` (with ``prev`` and ``after``) and
    ``actor``."""
    mutation = record.mutation.model_dump(mode="json", by_alias=True, exclude_none=True)
    mutation.update(
        value=record.mutation.value,
        prev=record.prev,
        prevKept=record.prev_kept,
        after=after_value(record),
        version=record.version,
        logId=record.log_id,
        ts=record.ts,
    )
    return {"state": state, "mutation": mutation, "actor": mutation["actor"]}


def secrets_in_play(
    record: LogRecord, state: Mapping[str, JsonValue], is_secret: Callable[[str], bool]
) -> list[JsonValue]:
    """The secret values a rule evaluating ``record`` over ``state`` may have quoted: the
    mutation's (its value, the value before and after) when its key is secret, and every
    secret key's in state (once state was read: unread, nothing of it can be quoted)."""
    found: list[JsonValue] = []
    if is_secret(record.mutation.key):
        found += [record.mutation.value, record.prev, after_value(record)]
    if not isinstance(state, StateView) or state.is_loaded:
        found += [value for key, value in state.items() if is_secret(key)]
    return found


def masked_variables(
    record: LogRecord, state: Mapping[str, JsonValue], is_secret: Callable[[str], bool]
) -> dict[str, Any]:
    """``variables`` as a record of a rule's work may show them: a secret key's values, in
    state and in the mutation, read as ``(secret)``."""
    names = variables(record, state)
    if is_secret(record.mutation.key):
        m = names["mutation"]
        for name in ("value", "prev", "after"):
            m[name] = masked(m.get(name))
        meta = m.get("meta")
        if isinstance(meta, dict) and "proposedValue" in meta:
            m["meta"] = {**meta, "proposedValue": masked(meta["proposedValue"])}
    names["state"] = StateView(
        lambda: {k: masked(v) if is_secret(k) else v for k, v in state.items()}
    )
    return names
