"""A team's own weights (``core/perception/team.py``): what a lesson moves, that they stay
bounded and decay, that a damaged table is refused, and that the embedded classifier reads
with them, naming a reading they changed."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.deliberation.interpretation import ActType
from core.deliberation.recent import MARKS, OnTable, RecentTurn, TurnContext, marks_bits, sketch
from core.perception.embedded import EmbeddedClassifier
from core.perception.team import (
    BOUND,
    HALF_LIFE_DAYS,
    KEPT_IDS,
    MAX_LEAN,
    RATE,
    Lesson,
    TeamWeights,
    marked,
    marks,
)
from core.runtime.team_weights import parsed

ACTS = list(ActType)
DAY_MS = 86_400_000
IDEA = "what if we used postgres for the orders service"
# a turn after an idea of someone else's, the idea on the table
AFTER_IDEA = TurnContext(
    writer="user:bob",
    recent=(RecentTurn(act=ActType.BRAINSTORM, who="user:alice", words=sketch(IDEA)),),
    on_table=OnTable(words=sketch("Postgres for the orders service"), by="user:alice"),
)


def test_a_lesson_moves_the_act_it_was_up_and_the_act_it_was_read_as_down() -> None:
    lesson = Lesson(marks("roger that", AFTER_IDEA), ActType.COMMIT, ActType.TANGENT, "c1")
    team = TeamWeights().learned(lesson, now_ms=1_000)
    bits = marked("roger that", AFTER_IDEA)
    assert set(team.rows) == set(bits) and team.lessons == 1 and team.taught_ms == 1_000
    for row in team.rows.values():
        assert row[ACTS.index(ActType.COMMIT)] == RATE
        assert row[ACTS.index(ActType.TANGENT)] == -RATE
        assert row[ACTS.index(ActType.QUESTION)] == 0.0
    leans = team.leans(bits)
    assert leans[ACTS.index(ActType.COMMIT)] == pytest.approx(RATE * len(bits))


def test_a_lesson_without_marks_or_that_agrees_with_the_reading_teaches_nothing() -> None:
    team = TeamWeights()
    assert team.learned(Lesson("", ActType.COMMIT, ActType.TANGENT, "c1"), 5) == team
    same = Lesson(marks("ship it"), ActType.COMMIT, ActType.COMMIT, "c2")
    assert team.learned(same, 5) == team


def test_marks_are_the_turns_words_and_pairs_hashed_not_the_words() -> None:
    held = marks("Let's go with Postgres")
    assert len(held) == MARKS // 4 and "postgres" not in held
    assert marks_bits(held) == marked("Let's go with Postgres")
    assert marked("let's go with postgres") == marked("Let's go with Postgres")
    assert marks_bits("") == frozenset()
    # what the turn reads in its context is marked too
    assert marked("roger that", AFTER_IDEA) > marked("roger that")


def test_the_weights_halve_each_half_life_and_vanish_at_last() -> None:
    lesson = Lesson(marks("roger that"), ActType.COMMIT, ActType.TANGENT, "c1")
    team = TeamWeights().learned(lesson, now_ms=0)
    later = team.at(HALF_LIFE_DAYS * DAY_MS)
    assert later.largest == pytest.approx(RATE / 2)
    assert later.lessons == 1
    assert team.at(60 * HALF_LIFE_DAYS * DAY_MS).rows == {}
    assert team.at(-5) == team  # a clock behind the last lesson changes nothing


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(max_size=40),
            st.one_of(st.none(), st.sampled_from(ACTS)),
            st.sampled_from(ACTS),
            st.integers(min_value=0, max_value=400 * DAY_MS),
        ),
        max_size=40,
    )
)
def test_any_lessons_keep_the_table_bounded(
    lessons: list[tuple[str, ActType | None, ActType, int]],
) -> None:
    team = TeamWeights()
    for n, (text, was, read_as, at) in enumerate(lessons):
        team = team.learned(Lesson(marks(text), was, read_as, f"c{n}"), at)
    assert team.largest <= BOUND and len(team.rows) <= MARKS and len(team.taught_by) <= KEPT_IDS
    # however many rows a turn sets, the table leans it at most MAX_LEAN an act
    assert all(abs(lean) <= MAX_LEAN for lean in team.leans(range(MARKS)))
    assert all(0 <= bit < MARKS and len(row) == len(ACTS) for bit, row in team.rows.items())
    # what is saved is read back the same
    assert parsed(team.model_dump_json()) == team


@pytest.mark.parametrize(
    "raw",
    [
        b"\xff\xfe not utf-8",
        "not json",
        json.dumps({"rows": {"3": [0.1, 0.0]}}),  # a row of two acts
        json.dumps({"rows": {"3": [9.0, 0.0, 0.0, 0.0, 0.0]}}),  # past the bound
        json.dumps({"rows": {str(MARKS): [0.1, 0.0, 0.0, 0.0, 0.0]}}),  # no such bit
        json.dumps({"rows": {}, "lessons": -1}),
        json.dumps({"rows": {}, "weights": "a field nobody wrote"}),
        '{"rows": {"3": [NaN, 0.1, 0.0, 0.0, 0.0]}}',  # no number
        '{"rows": {"3": [Infinity, 0.0, 0.0, 0.0, 0.0]}}',
        json.dumps({"rows": {}, "taught_ms": 10**17}),  # a lesson in the year 3 million
    ],
)
def test_what_is_no_table_is_read_as_none(raw: str | bytes) -> None:
    assert parsed(raw) is None


def test_nothing_held_is_an_empty_table() -> None:
    assert parsed(None) == TeamWeights()


def test_the_embedded_classifier_reads_with_the_teams_weights_and_says_so() -> None:
    shipped = EmbeddedClassifier()
    alone, source = shipped.interpret("roger that", context=AFTER_IDEA)
    assert alone.act_type is ActType.TANGENT and source == "embedded"
    team, taught = TeamWeights(), 0
    while shipped.with_team(team).classify("roger that", context=AFTER_IDEA).act_type is not (
        ActType.COMMIT
    ):
        lesson = Lesson(
            marks("roger that", AFTER_IDEA), ActType.COMMIT, ActType.TANGENT, str(taught)
        )
        team, taught = team.learned(lesson, 0), taught + 1
        assert taught <= 10, "ten lessons never taught it"
    turn, source = shipped.with_team(team).interpret("roger that", context=AFTER_IDEA)
    assert turn.act_type is ActType.COMMIT and source == "embedded+team"
    # a turn that shares nothing with the lessons reads as it did, named as before
    other = "how many connections would that take?"
    before = shipped.interpret(other, context=AFTER_IDEA)
    assert shipped.with_team(team).interpret(other, context=AFTER_IDEA) == before
    # no table, or an empty one: the shipped classifier itself
    assert shipped.with_team(TeamWeights()).team is None


def test_a_lesson_sent_again_teaches_nothing_more() -> None:
    lesson = Lesson(marks("roger that"), ActType.COMMIT, ActType.TANGENT, "c1")
    once = TeamWeights().learned(lesson, 0)
    assert once.learned(lesson, 5) is once and once.taught_by == ("c1",)
    # the ids kept are the newest KEPT_IDS
    many = once
    for n in range(KEPT_IDS + 3):
        many = many.learned(Lesson(marks("ok then"), ActType.COMMIT, ActType.TANGENT, str(n)), 0)
    assert len(many.taught_by) == KEPT_IDS and many.taught_by[-1] == str(KEPT_IDS + 2)


def test_try_another_angle_only_says_what_the_turn_was_not() -> None:
    """ "Try another angle" after a turn read as agreement lowers agreement, and raises no
    act in its place: an idea's weight would make the next such turn replace the candidate."""
    lesson = Lesson(marks("works for me i guess"), None, ActType.COMMIT, "c1")
    team = TeamWeights().learned(lesson, 0)
    commit = ACTS.index(ActType.COMMIT)
    for row in team.rows.values():
        assert row[commit] == -RATE and all(w == 0.0 for k, w in enumerate(row) if k != commit)


def test_a_long_turn_leans_no_more_than_a_short_one() -> None:
    long = " ".join(f"word{n}" for n in range(400))
    team = TeamWeights()
    for n in range(10):
        team = team.learned(Lesson(marks(long), ActType.COMMIT, ActType.TANGENT, str(n)), 0)
    leans = team.leans(marked(long))
    assert leans[ACTS.index(ActType.COMMIT)] == MAX_LEAN
    assert leans[ACTS.index(ActType.TANGENT)] == -MAX_LEAN


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="abcdefgilmnoprstuwy '?!", max_size=60),
    st.none() | st.text(alphabet="abcdefgilmnoprstuwy ", max_size=40),
    st.booleans(),
)
def test_the_topic_changes_no_mark(text: str, topic: str | None, after_idea: bool) -> None:
    """The runtime takes a turn's marks from the features its classifier read it with (by
    text and topic); the marks are those of the turn alone, whatever the topic."""
    context = AFTER_IDEA if after_idea else None
    assert marks(text, context, topic) == marks(text, context)
    assert marked(text, context, topic) == marked(text, context)
