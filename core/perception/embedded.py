"""The embedded classifier: deterministic, no network, well under a millisecond a turn.

A multinomial logistic regression (``linear.py``) over the turn's words, word pairs, shape and
the hand-written cues of ``cues.py`` (``features.py``), with a lean towards a tangent for a turn
that shares no word with the session's topic. Its weights were learned from
``training.jsonl`` (chat turns written for training only) and ``human_training.jsonl`` (real
people's, from the ICSI MRDA meetings), and ship as ``weights.json`` (``model.py``). The
confidence is the softmax share of the winning act, so a turn with no clear signal comes out
unsure (and the loop then handles it as a question).

To retrain after editing ``training.jsonl``, ``features.py`` or the cues::

    python bench/train_classifier.py --folds 5   # writes core/perception/weights.json
    python bench/classifier_accuracy.py          # accuracy on the evaluation corpus

Training is deterministic, and a test checks that ``weights.json`` matches a retrain.
"""

from __future__ import annotations

import re

from core.deliberation.interpretation import ActType, Stance, Target, TurnInterpretation
from core.deliberation.recent import TurnContext
from core.perception.classifier import ReadsAlone
from core.perception.cues import ARTIFACT, NEW_TOPIC
from core.perception.features import MAX_CHARS, features, normalise, unaddressed
from core.perception.in_context import context_features
from core.perception.linear import LinearModel, softmax
from core.perception.model import weights
from core.perception.stances import stance_of
from core.perception.team import TeamWeights, bits_of

__all__ = ["RULE_SURE", "EmbeddedClassifier", "unfamiliar"]

_ACTS = list(ActType)
# how sure an agreement read by rule is ("same", "+1"): above the shipped gate
RULE_SURE = 0.9
_LATIN_WORD = re.compile(r"[a-z]+")


class EmbeddedClassifier(ReadsAlone):
    """``model``: the weights it reads with (the shipped ones unless given: a bench may
    read with others); ``team``: a workspace's own weights, added (``team.py``)."""

    name = "embedded"
    by_team = "embedded+team"  # its name for a reading the team's weights changed

    def __init__(self, model: LinearModel | None = None, team: TeamWeights | None = None) -> None:
        self._model = model
        self.team = team if team is not None and team.rows else None

    def with_team(self, team: TeamWeights | None) -> EmbeddedClassifier:
        """This classifier reading with ``team``'s weights added (None: without)."""
        return EmbeddedClassifier(self._model, team)

    def interpret(
        self,
        text: str,
        topic: str | None = None,
        correlation_id: str | None = None,
        context: TurnContext | None = None,
    ) -> tuple[TurnInterpretation, str]:
        """As ``classify``, named "embedded+team" when the team's weights changed the act."""
        turn, alone = self._read(text, topic, context)
        changed = alone is not None and alone.act_type is not turn.act_type
        return turn, self.by_team if changed else self.name

    @property
    def model(self) -> LinearModel:
        return weights() if self._model is None else self._model

    def scores(
        self, text: str, topic: str | None = None, context: TurnContext | None = None
    ) -> dict[ActType, float]:
        """The model's logit for every act: higher is likelier; their softmax is the
        probability of each act."""
        logits = self.model.logits(features(text, topic) + context_features(text, context))
        return dict(zip(_ACTS, logits, strict=True))

    def classify(
        self, text: str, topic: str | None = None, context: TurnContext | None = None
    ) -> TurnInterpretation:
        return self._read(text, topic, context)[0]

    def _read(
        self, text: str, topic: str | None, context: TurnContext | None
    ) -> tuple[TurnInterpretation, TurnInterpretation | None]:
        """The reading, and the shipped model's alone when the team's weights bear on the
        turn (None: they do not, or there are none), from one pass over its features."""
        said = normalise(text[:MAX_CHARS])
        stance = stance_of(unaddressed(said))  # "same", "no, not that": plainly (stances.py)
        if stance is Stance.AGREE:
            sure = TurnInterpretation(
                act_type=ActType.COMMIT,
                target=Target.CURRENT_CANDIDATE,
                confidence=RULE_SURE,
                stance=stance,
            )
            return sure, None
        found = features(text, topic)
        if unfamiliar(said, found, self.model):  # unsure on purpose: handled as a question
            unsure = TurnInterpretation(
                act_type=ActType.QUESTION,
                target=Target.CURRENT_CANDIDATE,
                confidence=0.0,
                stance=stance,
            )
            return unsure, None
        found += context_features(text, context)
        logits = self.model.logits(found)
        leans = [] if self.team is None else self.team.leans(bits_of(found))
        if not any(leans):
            return _decided(logits, stance, said), None
        taught = [a + b for a, b in zip(logits, leans, strict=True)]
        return _decided(taught, stance, said), _decided(logits, stance, said)


def _decided(logits: list[float], stance: Stance | None, said: str) -> TurnInterpretation:
    """The act the logits make likeliest, and how sure (a dissent or a step back is never a
    commit: the other acts' shares)."""
    probs = softmax(logits)
    if stance in (Stance.DISSENT, Stance.BACK):  # never a commit: the rest's shares
        commit = _ACTS.index(ActType.COMMIT)
        rest = 1.0 - probs[commit]
        probs = [0.0 if k == commit else p / rest for k, p in enumerate(probs)]
    # ties go to the act listed first, so the answer never depends on float noise order
    best = max(range(len(_ACTS)), key=lambda k: (probs[k], -k))
    act = _ACTS[best]
    return TurnInterpretation(
        act_type=act,
        target=_target(act, said),
        confidence=round(probs[best], 4),
        stance=stance,
    )


def unfamiliar(said: str, found: list[str], model: LinearModel | None = None) -> bool:
    """A turn the model cannot read: mostly in a script other than the Latin alphabet
    (Chinese, Cyrillic, Arabic, ...), or whose words are mostly unknown to it (another
    language in Latin letters, a keyboard mash) with no cue to go by. Such a turn is read as
    unsure, never as a guess: "我们用postgres吧" must not surface "Use this"."""
    # a Latin word against each letter of another script (a Chinese character is a word)
    # (an ASCII turn with no capital has no letter but a-z: no need to look at each one)
    plain = said.isascii() and said.lower() == said
    foreign = 0 if plain else sum(1 for ch in said if ch.isalpha() and not "a" <= ch <= "z")
    if foreign > len(_LATIN_WORD.findall(said)):
        return True
    words = [name for name in found if name.startswith("w:")]
    known = sum(1 for name in words if name in (model or weights()).weights)
    cued = any(name.startswith("cue:") for name in found)
    return bool(words) and known * 2 < len(words) and not cued


def _target(act: ActType, said: str) -> Target:
    if act is ActType.TANGENT or NEW_TOPIC.search(said):
        return Target.NEW_TOPIC
    if ARTIFACT.search(said):
        return Target.ARTIFACT
    return Target.CURRENT_CANDIDATE
