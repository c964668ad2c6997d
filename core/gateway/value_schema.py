"""The value schema a policy pattern puts on its keys: type, enum, max length, list items."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Self

from pydantic import ConfigDict, Field, JsonValue, model_validator

from core.cached_models import Derived
from core.state.value_json import dumps

__all__ = ["ValueSchema", "ValueType"]


class ValueType(StrEnum):
    ANY = "any"
    STRING = "string"
    INTEGER = "integer"
    NUMBER = "number"
    BOOLEAN = "boolean"
    OBJECT = "object"
    ARRAY = "array"


_FITS: dict[ValueType, Callable[[JsonValue], bool]] = {
    ValueType.ANY: lambda v: True,
    ValueType.STRING: lambda v: isinstance(v, str),
    ValueType.INTEGER: lambda v: isinstance(v, int) and not isinstance(v, bool),
    ValueType.NUMBER: lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    ValueType.BOOLEAN: lambda v: isinstance(v, bool),
    ValueType.OBJECT: lambda v: isinstance(v, dict),
    ValueType.ARRAY: lambda v: isinstance(v, list),
}


_TYPE_WORDS = {
    ValueType.STRING: "text",
    ValueType.INTEGER: "a whole number",
    ValueType.NUMBER: "a number",
    ValueType.BOOLEAN: "true or false",
    ValueType.OBJECT: "a mapping",
    ValueType.ARRAY: "a list",
}


def _type_error(expected: ValueType, value: JsonValue) -> str | None:
    if _FITS[expected](value):
        return None
    hint = ""
    if isinstance(value, bool) and expected is ValueType.STRING:
        hint = " (YAML reads a bare yes/no/on/off as a boolean: quote it)"
    return f"must be {expected.value}, got {_json_type(value)}{hint}"


def _json_type(value: JsonValue) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )


class ValueSchema(Derived):
    """``max_length`` counts characters of a string and items of an array."""

    model_config = ConfigDict(extra="forbid")

    type: ValueType = ValueType.ANY
    enum: list[JsonValue] | None = Field(default=None, min_length=1)
    max_length: int | None = Field(default=None, ge=1)
    items: ValueSchema | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        for allowed in self.enum or []:
            if problem := _type_error(self.type, allowed):
                raise ValueError(f"enum value {allowed!r} {problem}")
        if self.items is not None and self.type not in (ValueType.ARRAY, ValueType.ANY):
            raise ValueError("items applies to type array only")
        if self.max_length is not None and self.type not in (
            ValueType.STRING,
            ValueType.ARRAY,
            ValueType.ANY,
        ):
            raise ValueError("max_length applies to strings and arrays only")
        return self

    def check(self, value: JsonValue, *, secret: bool = False) -> str | None:
        """None when ``value`` fits, else what is wrong with it: without the value when it
        is ``secret`` (nor the enum's values, among which a masked one would stand out)."""
        if problem := _type_error(self.type, value):
            return problem
        if self.enum is not None and value not in self.enum:
            if secret:
                return f"must be one of the {len(self.enum)} values the policy allows"
            return f"must be one of {', '.join(map(dumps, self.enum))}; got {dumps(value)}"
        if isinstance(value, str | list) and len(value) > (self.max_length or len(value)):
            unit = "characters" if isinstance(value, str) else "items"
            return f"must be at most {self.max_length} {unit}, got {len(value)}"
        if self.items is not None and isinstance(value, list):
            for index, item in enumerate(value):
                if problem := self.items.check(item, secret=secret):
                    return f"item {index} {problem}"
        return None

    def check_item(self, item: JsonValue, *, secret: bool = False) -> str | None:
        """For append: the key must hold a list, and the item must fit ``items``."""
        if self.type not in (ValueType.ARRAY, ValueType.ANY):
            return self._made_for("append", "a list", "array or any")
        return self.items.check(item, secret=secret) if self.items else None

    def check_delta(self, delta: JsonValue, *, secret: bool = False) -> str | None:
        """For incr: the key must hold a number, an integer key takes integer steps."""
        if self.type not in (ValueType.INTEGER, ValueType.NUMBER, ValueType.ANY):
            return self._made_for("incr", "a number", "integer, number or any")
        if self.type is ValueType.INTEGER and not isinstance(delta, int):
            got = "another number" if secret else dumps(delta)
            return f"incr of an integer key needs an integer step, got {got}"
        if self.enum is not None:
            return "incr cannot keep a value inside an enum"
        return None

    def _made_for(self, op: str, needs: str, types: str) -> str:
        """``op`` refused by the key's type, not by what it holds: the type refuses it set
        or not (a key never set reads as holding nothing, not as holding text)."""
        holds = _TYPE_WORDS.get(self.type, self.type.value)
        return (
            f"{op} needs {needs}, and the policy makes this key {holds} (type: "
            f"{self.type.value}), set or not; {op} works on keys of type {types}"
        )
