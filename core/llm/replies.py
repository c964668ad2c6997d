"""Reading what a model sent back: validated against a schema, tolerating the Markdown code
fence some servers wrap JSON in."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel, ValidationError

__all__ = ["ModelReply", "ToolCall", "first_error", "parse_reply"]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it: validated by the tool, not trusted


@dataclass(frozen=True)
class ModelReply:
    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)


M = TypeVar("M", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_reply(reply: str, model: type[M]) -> M:
    """Validate ``reply`` as ``model``; raises pydantic's ValidationError on anything else."""
    match = _FENCE.match(reply.strip())
    return model.model_validate_json(match.group(1) if match else reply)


def first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]
