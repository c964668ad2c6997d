"""What a user's turn is: the act it performs, what it is about, and how sure we are."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ActType", "Stance", "Target", "TurnInterpretation"]


class ActType(StrEnum):
    BRAINSTORM = "brainstorm"
    REFINE = "refine"
    COMMIT = "commit"
    QUESTION = "question"
    TANGENT = "tangent"


class Stance(StrEnum):
    """What a turn says of the candidate on the table, where its words say it plainly (read
    by rule, ``core.perception.stances``): the loop acts on it before the act."""

    AGREE = "agree"  # "same", "+1", "me too": agreement with what was said before
    DISSENT = "dissent"  # "no, not that": the candidate set aside, never committed
    BACK = "back"  # "go back to the previous one": the candidate before it, back
    EDIT = "edit"  # "and announce it on the blog": a change to the candidate on the table


class Target(StrEnum):
    CURRENT_CANDIDATE = "current_candidate"
    NEW_TOPIC = "new_topic"
    ARTIFACT = "artifact"


class TurnInterpretation(BaseModel):
    model_config = ConfigDict(frozen=True)

    act_type: ActType
    target: Target
    confidence: float = Field(ge=0.0, le=1.0)
    stance: Stance | None = None

    def routed(self, min_confidence: float) -> ActType:
        """The act the loop acts on: below ``min_confidence`` a turn is handled as a question,
        so that an unsure reading can never commit anything; nor can a dissent."""
        if self.stance in (Stance.DISSENT, Stance.BACK) and self.act_type is ActType.COMMIT:
            return ActType.BRAINSTORM
        return self.act_type if self.confidence >= min_confidence else ActType.QUESTION
