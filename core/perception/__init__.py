"""Perception: classifying a user's turn into a TurnInterpretation."""

from core.perception.classifier import Classifier
from core.perception.embedded import EmbeddedClassifier

__all__ = ["Classifier", "EmbeddedClassifier"]
