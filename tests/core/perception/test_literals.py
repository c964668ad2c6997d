"""The words a cue cannot match without are in every text it matches: skipping the search of
a cue none of whose words a turn holds finds the same cues (checked on every training turn
and on generated ones, short and long, Hypothesis; a turn's needed words are found by their
first three characters, a long turn's one by one), and the test is sound for the shapes of
pattern it reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core.perception import features
from core.perception.cues import ACT_CUES
from core.perception.literals import needed_words

CORPORA = Path(features.__file__).parent
NEEDS = [needed_words(cue.pattern) for cue in ACT_CUES]
WORDS = sorted({word for needs in NEEDS if needs for word in needs})


def searched(plain: str) -> list[str]:
    """The cues found by searching for every one of them."""
    return [
        name
        for name, cue in zip(features._CUE_NAMES, ACT_CUES, strict=True)
        if cue.pattern.search(plain)
    ]


def plain(text: str) -> str:
    return features.unaddressed(features.normalise(text))


def test_every_training_turn_has_the_cues_a_search_of_each_finds() -> None:
    texts = [
        json.loads(line)["text"]
        for name in ("training.jsonl", "human_training.jsonl", "chat_training.jsonl")
        for line in (CORPORA / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    assert len(texts) > 1000
    assert [features._cued(plain(t)) for t in texts] == [searched(plain(t)) for t in texts]


fragments = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from([" ", "'", "?", "!", ",", "it", "the", "we", "s", "ed", "ing", "+1", "👍"]),
    st.text(alphabet="abcdefghilmnoprstuwy '?+1", max_size=4),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(fragments, max_size=12).map("".join))
def test_a_generated_turn_has_the_cues_a_search_of_each_finds(text: str) -> None:
    said = plain(text)
    assert features._cued(said) == searched(said)


@settings(max_examples=200, deadline=None)
@given(st.lists(fragments, min_size=60, max_size=160).map("".join))
def test_a_long_generated_turn_has_the_cues_a_search_of_each_finds(text: str) -> None:
    """A turn of a few hundred characters: past ``_PIECEMEAL``, its needed words are looked
    for one by one rather than by their first three characters; both find the same cues."""
    said = plain(text)
    assert features._cued(said) == searched(said)


def test_what_a_pattern_needs() -> None:
    assert needed_words(re.compile(r"\blet'?s (go|roll)\b")) == {"let"}
    assert needed_words(re.compile(r"\b(ship|lock) it|\blocked\b")) == {"ship", "lock", "locked"}
    assert needed_words(re.compile(r"(xyz|zz)w?")) == {"xyz", "zz"}
    # an optional part, a class, an anchored or case-blind pattern, an empty alternative
    for nothing in (r"(ab)?", r"[a-z]+", r"^maybe", r"(?i)maybe", r"a|", r"\w+"):
        assert needed_words(re.compile(nothing)) is None, nothing
