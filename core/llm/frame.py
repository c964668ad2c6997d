"""The one shape of a model call: a role prompt, a task prompt, the current user input and a
structured ``context_state``. Never prior turns."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from core.errors import DeliberateError

__all__ = ["PromptFrame", "TranscriptReplay", "guard"]


class TranscriptReplay(DeliberateError):
    """A call was about to carry something other than one system and one user message."""


class PromptFrame(BaseModel):
    model_config = ConfigDict(frozen=True)

    role_prompt: str = Field(min_length=1)
    task_prompt: str = Field(min_length=1)
    user_input: str
    context_state: dict[str, JsonValue] = Field(default_factory=dict)

    def messages(self) -> list[dict[str, str]]:
        """System: who the model is and what to do. User: this turn's input and the state it
        may use, as one JSON object, so the input cannot pose as instructions around it."""
        user = json.dumps(
            {"context_state": self.context_state, "user_input": self.user_input},
            ensure_ascii=False,
        )
        messages = [
            {"role": "system", "content": f"{self.role_prompt}\n\n{self.task_prompt}"},
            {"role": "user", "content": user},
        ]
        guard(messages)
        return messages


def guard(messages: list[dict[str, Any]]) -> None:
    """Raise unless ``messages`` is exactly one system message then one user message of text:
    an assistant message or any earlier turn means a transcript is being replayed."""
    roles = [m.get("role") for m in messages]
    if roles != ["system", "user"]:
        raise TranscriptReplay(f"a model call takes one system and one user message, got {roles}")
    if any(
        not isinstance(m.get("content"), str) or set(m) != {"role", "content"} for m in messages
    ):
        raise TranscriptReplay("a model call's messages carry text content and nothing else")
