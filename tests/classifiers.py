"""A classifier for tests that watch what the runtime asks of it: the real embedded one,
keeping each context it was given."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.deliberation.interpretation import TurnInterpretation
from core.deliberation.recent import TurnContext
from core.perception.classifier import ReadsAlone
from core.perception.embedded import EmbeddedClassifier

__all__ = ["Seen"]


@dataclass
class Seen(ReadsAlone):
    """The real embedded classifier, keeping each context it was given (in order)."""

    contexts: list[TurnContext | None] = field(default_factory=list)
    inner: EmbeddedClassifier = field(default_factory=EmbeddedClassifier)
    name: str = "embedded"

    def classify(
        self, text: str, topic: str | None = None, context: TurnContext | None = None
    ) -> TurnInterpretation:
        self.contexts.append(context)
        return self.inner.classify(text, topic, context)
