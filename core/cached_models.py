"""Models whose ``functools.cached_property`` values are derived from their fields.

A cached property lives in the instance ``__dict__``, so reading it is as cheap as reading a
field (pydantic private attributes are not). ``model_copy`` copies that ``__dict__``, so a copy
with updated fields would keep stale derived values: here it drops them instead."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, cached_property
from typing import Any, Self

from pydantic import BaseModel

__all__ = ["Derived"]


@cache
def _derived_names(cls: type) -> tuple[str, ...]:
    return tuple(
        name
        for klass in cls.__mro__
        for name, member in vars(klass).items()
        if isinstance(member, cached_property)
    )


class Derived(BaseModel):
    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        copy = super().model_copy(update=update, deep=deep)
        for name in _derived_names(type(self)):
            copy.__dict__.pop(name, None)
        return copy
