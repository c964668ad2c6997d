"""The one interface every turn classifier offers (embedded rules, or a model)."""

from __future__ import annotations

from typing import Protocol

from core.interpretation import TurnInterpretation

__all__ = ["Classifier"]


class Classifier(Protocol):
    name: str

    def classify(self, text: str, topic: str | None = None) -> TurnInterpretation:
        """Interpret one turn; ``topic`` is what the session is deliberating, if known."""
        ...
