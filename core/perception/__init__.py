"""Perception: classifying a user's turn into a TurnInterpretation. The model classifier is
in ``core.perception.llm`` (it loads the ``openai`` client)."""

from core.perception.classifier import Classifier
from core.perception.embedded import EmbeddedClassifier

__all__ = ["Classifier", "EmbeddedClassifier"]
