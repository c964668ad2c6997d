"""What the embedded classifier sees of a turn: a bag of named, binary features.

Words and word pairs carry most of the signal; the shape of the turn (a closing question mark,
an opening wh-word, an emoji) and the hand-written cues in ``cues.py`` add what a small
training corpus cannot: the cues generalise to phrasings the corpus never spelled out, and the
learned weights decide how much each one is worth. Feature names are the keys of
``weights.json``, so changing anything here means retraining (see ``embedded.py``).
"""

from __future__ import annotations

import re
from itertools import pairwise

from core.perception.cues import ACT_CUES, STOPWORDS

__all__ = ["content_words", "features", "normalise"]

# a word, a "+1", or a single emoji/pictograph (they carry tone in chat: 👍 vs 😂)
_TOKEN = re.compile(r"[a-z0-9]+|\+1|[\u2600-\u27bf\U0001f300-\U0001faff]")
_WORD = re.compile(r"[a-z0-9]+")
_EMOJI = re.compile(r"[\u2600-\u27bf\U0001f300-\U0001faff]")
_WH = frozenset("what how why when where who which whose".split())  # noqa: SIM905
_AUX = frozenset("is are does do did can will has have was were should would could".split())  # noqa: SIM905
# the cue features are named by act and position, so an edited cue list needs a retrain
_CUE_NAMES = [f"cue:{cue.act.value}:{n}" for n, cue in enumerate(ACT_CUES)]


def normalise(text: str) -> str:
    # typographic apostrophes (phones type them) count as plain ones
    return " ".join(text.lower().replace("\u2019", "'").replace("\u2018", "'").split())


def content_words(text: str) -> set[str]:
    """Words that say what a turn is about, compared by their first five letters so that
    "stream" and "streaming" meet."""
    return {w[:5] for w in _WORD.findall(text) if len(w) > 3 and w not in STOPWORDS}


def features(text: str, topic: str | None = None) -> list[str]:
    """The features present in a turn, without repeats, in a stable order."""
    said = normalise(text)
    # "let's" and "lets" are one word in chat
    tokens = _TOKEN.findall(said.replace("'", ""))
    found = [f"w:{t}" for t in tokens]
    framed = ["<s>", *tokens, "</s>"]
    found += [f"b:{a} {b}" for a, b in pairwise(framed)]
    found += _shape(said, tokens)
    found += [
        name for name, cue in zip(_CUE_NAMES, ACT_CUES, strict=True) if cue.pattern.search(said)
    ]
    found += _topic(said, topic)
    return list(dict.fromkeys(found))


def _shape(said: str, tokens: list[str]) -> list[str]:
    shape = []
    if said.rstrip(" !.)").endswith("?"):
        shape.append("shape:ends?")
    if tokens and tokens[0] in _WH:
        shape.append("shape:wh-first")
    if tokens and tokens[0] in _AUX:
        shape.append("shape:aux-first")
    if _EMOJI.search(said):
        shape.append("shape:emoji")
    if "!" in said:
        shape.append("shape:bang")
    if any(t.isdigit() for t in tokens):
        shape.append("shape:number")
    # no bucket for one or two words: that would make any unknown short word look like "ok"
    if len(tokens) >= 8:
        shape.append("shape:long")
    return shape


def _topic(said: str, topic: str | None) -> list[str]:
    """A turn that shares a word with the session topic is on it; one of some length that
    shares none leans towards a tangent (an idea, too, often shares none: the weights say
    how much that counts)."""
    if not topic:
        return []
    words = content_words(said)
    if words & content_words(normalise(topic)):
        return ["topic:shared"]
    return ["topic:apart"] if len(words) >= 3 else []
