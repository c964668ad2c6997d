"""What a user's turn is: the act it performs, what it is about, and how sure we are."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ActType", "Target", "TurnInterpretation"]


class ActType(StrEnum):
    BRAINSTORM = "brainstorm"
    REFINE = "refine"
    COMMIT = "commit"
    QUESTION = "question"
    TANGENT = "tangent"


class Target(StrEnum):
    CURRENT_CANDIDATE = "current_candidate"
    NEW_TOPIC = "new_topic"
    ARTIFACT = "artifact"


class TurnInterpretation(BaseModel):
    model_config = ConfigDict(frozen=True)

    act_type: ActType
    target: Target
    confidence: float = Field(ge=0.0, le=1.0)

    def routed(self, min_confidence: float) -> ActType:
        """The act the loop acts on: below ``min_confidence`` a turn is handled as a question,
        so that an unsure reading can never commit anything."""
        return self.act_type if self.confidence >= min_confidence else ActType.QUESTION
