"""Stances read by rule (``core.perception.stances``): a "no" is never a commit, whatever
the model's weights make of its other words, and "same" after an idea is agreement. The
turns are typed as people type them in chat; they check behaviour, they measure nothing."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from core.deliberation.interpretation import ActType, Stance
from core.perception.embedded import RULE_SURE, EmbeddedClassifier
from core.perception.features import normalise
from core.perception.stances import stance_of

CLASSIFIER = EmbeddedClassifier()

DISSENT = [
    "no",
    "nah",
    "nope",
    "no, not that",
    "hmm no",
    "wait, no",
    "no no no",
    "please no",
    "hard no",
    "absolutely not",
    "not yet",
    "I don't think so",
    "i dont think so tbh",
    "I disagree",
    "don't ship it",
    "don't do it",
    "let's not go with that",
    "let's not do that",
    "we should not use it",
    "-1",
    "👎",
    "i'd rather not",
    "not a fan",
    "that's a bad idea",
]
BACK = [
    "no, go back to the previous one",
    "go back to the first version",
    "can we switch back to the earlier option",
    "the first version was better, let's just use that one",
    "restore the previous version please",
]
ECHO = ["same", "same here", "me too", "+1", "ditto", "seconded", "^", "this", "agreed"]
STILL_COMMITS = [
    "no problem, ship it",
    "no-brainer, let's do it",
    "let's not overthink it, ship it",
    "no objections, let's go with it",
    "sounds good",
    "ok let's do it",
]
NO_STANCE = [
    "we can go back to the vendor later",
    "no one told me about the outage",
    "no matter what, it has to be in the EU",
    "it's not a bad idea",
    "not sure how backups work on clickhouse",
    "same as before?",
    "no, you're right",
]


@pytest.mark.parametrize("said", DISSENT)
def test_a_no_is_never_a_commit(said: str) -> None:
    reading = CLASSIFIER.classify(said)
    assert reading.stance is Stance.DISSENT
    assert reading.act_type is not ActType.COMMIT
    assert all(reading.routed(gate) is not ActType.COMMIT for gate in (0.0, 0.45, 0.9))


@pytest.mark.parametrize("said", BACK)
def test_asking_for_an_earlier_idea_is_back_never_a_commit(said: str) -> None:
    reading = CLASSIFIER.classify(said)
    assert reading.stance is Stance.BACK and reading.act_type is not ActType.COMMIT


@pytest.mark.parametrize("said", ECHO)
def test_an_echo_is_agreement(said: str) -> None:
    reading = CLASSIFIER.classify(said)
    assert reading.stance is Stance.AGREE and reading.act_type is ActType.COMMIT
    assert reading.confidence == RULE_SURE and reading.routed(0.45) is ActType.COMMIT


@pytest.mark.parametrize("said", STILL_COMMITS)
def test_a_no_that_is_no_refusal_still_commits(said: str) -> None:
    reading = CLASSIFIER.classify(said)
    assert reading.stance is None and reading.act_type is ActType.COMMIT


@pytest.mark.parametrize("said", NO_STANCE)
def test_words_near_a_stance_take_none(said: str) -> None:
    assert stance_of(normalise(said)) is None


@given(
    st.sampled_from(["no, ", "nope ", "nah, ", "I don't think so. ", "-1 "]),
    st.text(alphabet=st.characters(codec="utf-8", categories=["L", "N", "P", "Zs"]), max_size=60),
)
def test_whatever_follows_a_refusal_it_never_commits(opening: str, rest: str) -> None:
    """The rest of the turn may pull the weights towards a commit as hard as it likes."""
    said = opening + rest
    assume(stance_of(normalise(said)) in (Stance.DISSENT, Stance.BACK))
    for pull in ("", " ship it", " let's go with it, locked in"):
        assert CLASSIFIER.classify(said + pull).routed(0.0) is not ActType.COMMIT


EDITS = [
    "and announce it a week before on the blog",
    "make sure support is staffed that day",
    "change it so support is fully staffed",
    "also record it",
    "plus a Q&A at the end",
    "without the read replica",
    "needs a runbook too",
]
NO_EDIT = ["but what if we used mysql", "and how about a webinar?", "make it so", "also, why?"]


@pytest.mark.parametrize("said", EDITS)
def test_a_change_said_as_an_instruction_is_an_edit(said: str) -> None:
    assert stance_of(normalise(said)) is Stance.EDIT


@pytest.mark.parametrize("said", NO_EDIT)
def test_a_new_idea_or_a_question_is_no_edit(said: str) -> None:
    assert stance_of(normalise(said)) is not Stance.EDIT
