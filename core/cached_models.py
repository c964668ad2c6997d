"""Models whose ``functools.cached_property`` values are derived from their fields
(``Derived``), and models copied often (``Copied``).

A cached property lives in the instance ``__dict__``, so reading it is as cheap as reading a
field (pydantic private attributes are not). ``model_copy`` copies that ``__dict__``, so a copy
with updated fields would keep stale derived values: here it drops them instead.

The loop's every update copies the session's state with a field or two changed (pydantic's
``model_copy``: shallow, no validation). ``Copied`` makes that copy the same way without
pydantic's general paths (``copy.copy`` dispatched on each part, deep copies, extra fields,
private attributes, which it still leaves to pydantic): about 40% of a copy's cost."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, cached_property
from typing import Any, Self

from pydantic import BaseModel

__all__ = ["Copied", "Derived"]

_set = object.__setattr__


@cache
def _derived_names(cls: type) -> tuple[str, ...]:
    return tuple(
        name
        for klass in cls.__mro__
        for name, member in vars(klass).items()
        if isinstance(member, cached_property)
    )


class Copied(BaseModel):
    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """pydantic's ``model_copy``, the same copy: the fields (``update``'s replacing
        theirs, not validated) and the fields set, on a model with no extra fields and no
        private attributes (any other, and a deep copy, are pydantic's to make)."""
        if deep or self.__pydantic_extra__ is not None or self.__pydantic_private__ is not None:
            return super().model_copy(update=update, deep=deep)
        cls = type(self)
        copied = cls.__new__(cls)
        data, fields = dict(self.__dict__), set(self.__pydantic_fields_set__)
        if update:
            data.update(update)
            fields.update(update)
        _set(copied, "__dict__", data)
        _set(copied, "__pydantic_extra__", None)
        _set(copied, "__pydantic_fields_set__", fields)
        _set(copied, "__pydantic_private__", None)
        return copied


class Derived(Copied):
    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        copy = super().model_copy(update=update, deep=deep)
        for name in _derived_names(type(self)):
            copy.__dict__.pop(name, None)
        return copy
