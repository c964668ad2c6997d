"""A session (a Slack thread, a Discord channel, a console run) as the loop sees it: its
interaction state and working memory, and how many times it was saved."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from core.cached_models import Copied
from core.deliberation.memory import ContextState, InteractionState

__all__ = ["Session"]


class Session(Copied):
    """``version`` is the number of saves so far: 0 for a session never saved."""

    model_config = ConfigDict(extra="forbid")

    id: str
    version: int = Field(default=0, ge=0)
    interaction: InteractionState = Field(default_factory=InteractionState)
    working: ContextState = Field(default_factory=ContextState)

    def with_interaction(self, state: InteractionState) -> Session:
        return self.model_copy(update={"interaction": state})
