"""The embedded classifier: deterministic, no network, well under a millisecond a turn.

A multinomial logistic regression (``linear.py``) over the turn's words, word pairs, shape and
the hand-written cues of ``cues.py`` (``features.py``), with a lean towards a tangent for a turn
that shares no word with the session's topic. Its weights were learned from
``training.jsonl``, a corpus of chat turns written for training only, and ship as
``weights.json``. The confidence is the softmax share of the winning act, so a turn with no
clear signal comes out unsure (and the loop then handles it as a question).

To retrain after editing ``training.jsonl``, ``features.py`` or the cues::

    python bench/train_classifier.py --folds 5   # writes core/perception/weights.json
    python bench/classifier_accuracy.py          # accuracy on the evaluation corpus

Training is deterministic, and a test checks that ``weights.json`` matches a retrain.
"""

from __future__ import annotations

from core.deliberation.interpretation import ActType, Target, TurnInterpretation
from core.perception.cues import ARTIFACT, NEW_TOPIC
from core.perception.features import features, normalise
from core.perception.linear import softmax
from core.perception.model import weights

__all__ = ["EmbeddedClassifier"]

_ACTS = list(ActType)


class EmbeddedClassifier:
    name = "embedded"

    def scores(self, text: str, topic: str | None = None) -> dict[ActType, float]:
        """The model's logit for every act: higher is likelier; their softmax is the
        probability of each act."""
        logits = weights().logits(features(text, topic))
        return dict(zip(_ACTS, logits, strict=True))

    def interpret(
        self, text: str, topic: str | None = None, correlation_id: str | None = None
    ) -> tuple[TurnInterpretation, str]:
        return self.classify(text, topic), self.name

    def classify(self, text: str, topic: str | None = None) -> TurnInterpretation:
        logits = weights().logits(features(text, topic))
        probs = softmax(logits)
        # ties go to the act listed first, so the answer never depends on float noise order
        best = max(range(len(_ACTS)), key=lambda k: (probs[k], -k))
        act = _ACTS[best]
        return TurnInterpretation(
            act_type=act, target=_target(act, normalise(text)), confidence=round(probs[best], 4)
        )


def _target(act: ActType, said: str) -> Target:
    if act is ActType.TANGENT or NEW_TOPIC.search(said):
        return Target.NEW_TOPIC
    if ARTIFACT.search(said):
        return Target.ARTIFACT
    return Target.CURRENT_CANDIDATE
