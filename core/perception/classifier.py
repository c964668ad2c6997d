"""The one interface every turn classifier offers (the embedded model, or a chat model)."""

from __future__ import annotations

from typing import Protocol

from core.deliberation.interpretation import TurnInterpretation
from core.deliberation.recent import TurnContext
from core.perception.team import TeamWeights

__all__ = ["Classifier", "ReadsAlone"]


class Classifier(Protocol):
    name: str
    # reads in this process, at once (no model to wait for): the runtime need not save the
    # session before asking it
    in_process: bool

    def classify(
        self, text: str, topic: str | None = None, context: TurnContext | None = None
    ) -> TurnInterpretation:
        """Interpret one turn; ``topic`` is what the session is deliberating, if known;
        ``context``, what the session knows at this turn (its last turns, the candidate)."""
        ...

    def interpret(
        self,
        text: str,
        topic: str | None = None,
        correlation_id: str | None = None,
        context: TurnContext | None = None,
    ) -> tuple[TurnInterpretation, str]:
        """The interpretation and the name of the classifier that made it (a model
        classifier may have fallen back to another)."""
        ...

    def with_team(self, team: TeamWeights | None) -> Classifier:
        """This classifier reading with a workspace's own weights (``team.py``) where it
        can (the embedded one; a model's fallback to it); None: without them."""
        ...


class ReadsAlone:
    """A classifier whose every reading is its own: ``interpret`` is ``classify`` and its
    name (a chat model's may fall back to another)."""

    name: str
    in_process = True

    def classify(
        self, text: str, topic: str | None = None, context: TurnContext | None = None
    ) -> TurnInterpretation:
        raise NotImplementedError

    def interpret(
        self,
        text: str,
        topic: str | None = None,
        correlation_id: str | None = None,
        context: TurnContext | None = None,
    ) -> tuple[TurnInterpretation, str]:
        return self.classify(text, topic, context), self.name

    def with_team(self, team: TeamWeights | None) -> Classifier:
        return self  # (nothing of a team's to read with)
