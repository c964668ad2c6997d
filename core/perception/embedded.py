"""The embedded classifier: deterministic, no network, a few hundred microseconds a turn.

Every act type starts from a prior and gains the weight of each cue that matches; a turn that
shares no word with the session's topic leans towards a tangent, one that does leans away.
The confidence is the softmax share of the winning act, so a turn with no clear cue comes out
unsure (and the loop then handles it as a question)."""

from __future__ import annotations

import math
import re

from core.interpretation import ActType, Target, TurnInterpretation
from core.perception.cues import ACT_CUES, ARTIFACT, NEW_TOPIC, PRIORS, STOPWORDS

__all__ = ["EmbeddedClassifier"]

_WORD = re.compile(r"[a-z0-9]+")
# weaker than the brainstorm prior: an idea often shares no word with its topic
_TOPIC_SHARED, _TOPIC_APART = -1.0, 0.3


class EmbeddedClassifier:
    name = "embedded"

    def scores(self, text: str, topic: str | None = None) -> dict[ActType, float]:
        said = _normalise(text)
        scores = dict(PRIORS)
        for cue in ACT_CUES:
            if cue.pattern.search(said):
                scores[cue.act] += cue.weight
        if topic:
            scores[ActType.TANGENT] += _topic_lean(said, topic)
        return scores

    def classify(self, text: str, topic: str | None = None) -> TurnInterpretation:
        scores = self.scores(text, topic)
        act = max(scores, key=lambda a: (scores[a], -list(ActType).index(a)))
        total = sum(math.exp(s) for s in scores.values())
        confidence = math.exp(scores[act]) / total
        return TurnInterpretation(
            act_type=act, target=_target(act, _normalise(text)), confidence=round(confidence, 4)
        )


def _normalise(text: str) -> str:
    # typographic apostrophes (phones type them) count as plain ones
    return " ".join(text.lower().replace("\u2019", "'").replace("\u2018", "'").split())


def _content_words(text: str) -> set[str]:
    return {w[:5] for w in _WORD.findall(text) if len(w) > 3 and w not in STOPWORDS}


def _topic_lean(said: str, topic: str) -> float:
    """Shared words (compared by their first five letters) pull away from a tangent; a turn of
    some length that shares none pushes towards one."""
    words = _content_words(said)
    if words & _content_words(topic.lower()):
        return _TOPIC_SHARED
    return _TOPIC_APART if len(words) >= 3 else 0.0


def _target(act: ActType, said: str) -> Target:
    if act is ActType.TANGENT or NEW_TOPIC.search(said):
        return Target.NEW_TOPIC
    if ARTIFACT.search(said):
        return Target.ARTIFACT
    return Target.CURRENT_CANDIDATE
