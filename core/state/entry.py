"""A state entry: the current value of one key, with its version and provenance."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue
from pydantic.alias_generators import to_camel

from core.state.actor import Actor

__all__ = ["Entry"]


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
