"""The evaluator over the shipped beats: pure, priority-ordered, every action traced to its
beat; and beat definitions that do not compile fail at load."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from redis import Redis

from core.config.core_config import load_config
from core.deliberation import beat_evaluator
from core.deliberation.actions import ActionType
from core.deliberation.beat_evaluator import evaluate
from core.deliberation.interpretation import ActType, Target, TurnInterpretation
from core.deliberation.memory import Candidate, InteractionState, Mode, ProposalRef, ThreadStatus
from core.errors import ConfigError
from core.runtime.beat_history import BeatHistory
from tests.conftest import write_config

BEATS = load_config().beats


def said(act: ActType) -> TurnInterpretation:
    return TurnInterpretation(act_type=act, target=Target.CURRENT_CANDIDATE, confidence=0.9)


CANDIDATE = Candidate(id="c1", text="Postgres with read replicas", version=2)


def test_the_shipped_library_has_the_four_beats() -> None:
    assert {b.id for b in BEATS} >= {
        "CandidateReady",
        "DriftDetected",
        "ReadyToCommit",
        "ProposalPending",
    }


def test_nothing_fires_on_an_empty_session() -> None:
    result = evaluate(InteractionState(), BEATS)
    assert result.fired == [] and result.actions == [] and result.nudge is None
    assert result.mode is Mode.IDLE
    assert all(not c.held and c.error is None for c in result.checks)


def test_a_candidate_surfaces_its_buttons() -> None:
    result = evaluate(InteractionState(candidate=CANDIDATE, mode=Mode.EXPLORING), BEATS)
    assert result.fired == ["CandidateReady"]
    assert [a.type for a in result.actions] == [
        ActionType.CONFIRM_CURRENT,
        ActionType.ALTERNATIVE_CURRENT,
        ActionType.EXPAND_CURRENT,
        ActionType.ADD_CURRENT_TO_ARTIFACT,
        ActionType.DERIVE_ENTITY_FROM_CURRENT,
    ]
    assert {a.beat for a in result.actions} == {"CandidateReady"}
    assert result.mode is Mode.EXPLORING


def test_a_commit_turn_makes_the_higher_beat_win_labels_and_mode() -> None:
    state = InteractionState(candidate=CANDIDATE, last_interpretation=said(ActType.COMMIT))
    result = evaluate(state, BEATS)
    assert result.fired == ["ReadyToCommit", "CandidateReady"]
    assert (result.actions[0].type, result.actions[0].beat) == (
        ActionType.CONFIRM_CURRENT,
        "ReadyToCommit",
    )
    assert len(result.actions) == 5 and len({a.type for a in result.actions}) == 5
    assert result.mode is Mode.DECIDING
    assert result.nudge == 'Lock in "Postgres with read replicas"?'


def test_a_tangent_is_drift() -> None:
    state = InteractionState(candidate=CANDIDATE, last_interpretation=said(ActType.TANGENT))
    result = evaluate(state, BEATS)
    assert result.fired[0] == "DriftDetected" and result.mode is Mode.DRIFTING
    assert result.nudge == 'We drifted. Back to "Postgres with read replicas"?'


def test_a_pending_proposal_comes_first() -> None:
    state = InteractionState(
        candidate=CANDIDATE,
        pending_proposals=[ProposalRef(id="p1", summary="set scene.name = BRB")],
        thread_status=ThreadStatus.DECIDED,
    )
    result = evaluate(state, BEATS)
    assert result.fired == ["ProposalPending"]
    assert [a.type for a in result.actions] == [
        ActionType.APPLY_PROPOSAL,
        ActionType.EDIT_PROPOSAL,
        ActionType.DISCARD_PROPOSAL,
    ]


def test_evaluation_is_pure() -> None:
    state = InteractionState(candidate=CANDIDATE, last_interpretation=said(ActType.COMMIT))
    before = state.model_dump()
    assert evaluate(state, BEATS) == evaluate(state, BEATS)
    assert state.model_dump() == before


def test_a_state_read_alike_is_answered_alike_and_its_nudge_is_its_own() -> None:
    """What the beats read is remembered with what they made of it (``_evaluated``); the
    nudge is filled in from each state, and the state's mode stands where no beat sets one."""
    other = CANDIDATE.model_copy(update={"text": "SQLite on one box"})
    first = InteractionState(candidate=CANDIDATE, last_interpretation=said(ActType.COMMIT))
    second = first.model_copy(update={"candidate": other, "turn_count": 7})
    assert evaluate(first, BEATS).nudge == 'Lock in "Postgres with read replicas"?'
    assert evaluate(second, BEATS).nudge == 'Lock in "SQLite on one box"?'
    assert evaluate(first, BEATS).nudge == 'Lock in "Postgres with read replicas"?'
    quiet = InteractionState(mode=Mode.EXPLORING)
    assert evaluate(quiet, BEATS).mode is Mode.EXPLORING
    assert evaluate(quiet.model_copy(update={"mode": Mode.DRIFTING}), BEATS).mode is Mode.DRIFTING


def test_other_beats_that_read_alike_are_not_answered_from_memory(tmp_path: Path) -> None:
    """Two libraries whose beats read the same state, their actions apart: each its own."""
    beat = (
        "beats: !replace\n  - id: B\n    when: has(state.candidate)\n"
        "    actions: [{type: %s, label: L}]\n"
    )
    use = load_config(write_config(tmp_path, beat % "ConfirmCurrent", "a.yaml")).beats
    expand = load_config(write_config(tmp_path, beat % "ExpandCurrent", "b.yaml")).beats
    state = InteractionState(candidate=CANDIDATE)
    assert [a.type for a in evaluate(state, use).actions] == [ActionType.CONFIRM_CURRENT]
    assert [a.type for a in evaluate(state, expand).actions] == [ActionType.EXPAND_CURRENT]


@settings(max_examples=150, deadline=None)
@given(
    candidate=st.sampled_from([None, CANDIDATE]),
    status=st.sampled_from(list(ThreadStatus)),
    mode=st.sampled_from(list(Mode)),
    act=st.sampled_from([None, *ActType]),
    proposals=st.integers(0, 2),
    earlier=st.integers(0, 2),
    turns=st.integers(0, 3),
)
def test_an_evaluation_remembered_is_the_one_made_anew(
    candidate: Candidate | None,
    status: ThreadStatus,
    mode: Mode,
    act: ActType | None,
    proposals: int,
    earlier: int,
    turns: int,
) -> None:
    state = InteractionState(
        candidate=candidate,
        thread_status=status,
        mode=mode,
        last_interpretation=None if act is None else said(act),
        pending_proposals=[ProposalRef(id=f"p{n}", summary="s") for n in range(proposals)],
        earlier=[CANDIDATE.model_copy(update={"id": f"e{n}"}) for n in range(earlier)],
        turn_count=turns,
    )
    remembered = evaluate(state, BEATS)
    beat_evaluator._evaluated.clear()
    assert remembered == evaluate(state, BEATS)


def test_a_condition_that_errors_does_not_fire_and_says_why(tmp_path: Path) -> None:
    text = (
        "beats: !replace\n  - id: Broken\n    when: state.candidate.text.size() > 3\n"
        "  - id: WrongType\n    when: state.turn_count + 1\n"
    )
    beats = load_config(write_config(tmp_path, text)).beats
    result = evaluate(InteractionState(turn_count=2), beats)
    assert result.fired == []
    broken, wrong = result.checks
    assert broken.error == "no 'candidate' to read: it is not set"
    assert wrong.error == "the condition gave int, not a bool"


def test_no_error_of_a_condition_fails_the_turn(tmp_path: Path) -> None:
    """cel raises more than KeyError and TypeError: an index past the end of a list, a
    division by zero, an overflow. Each leaves its beat unfired, saying why, and the beats
    after it are still evaluated."""
    text = (
        "beats: !replace\n"
        "  - id: PastTheEnd\n    when: state.pending_proposals[0].summary == 'x'\n"
        "  - id: ByZero\n    when: 10 / (state.turn_count - 2) > 1\n"
        "  - id: Overflow\n    when: state.turn_count + 9223372036854775807 > 0\n"
        "  - id: Fine\n    when: state.turn_count == 2\n"
    )
    beats = load_config(write_config(tmp_path, text)).beats
    result = evaluate(InteractionState(turn_count=2), beats)
    assert result.fired == ["Fine"]
    errors = [c.error or "" for c in result.checks[:3]]
    # in plain words, with no Python class name
    assert errors == [
        "index out of bounds: 0",
        "division by zero in CEL expression",
        "Arithmetic overflow in 'add' on 2 and 9223372036854775807.",
    ]


@pytest.mark.parametrize(
    ("beat", "message"),
    [
        ("  - id: B\n    when: state.mode ==\n", ":3: beats[0].when: Value error, CEL does not"),
        (
            "  - id: B\n    when: 'true'\n    actions: [{type: LaunchMissiles, label: Go}]\n",
            ":4: beats[0].actions[0].type",
        ),
        ("  - id: B\n    when: 'true'\n    nudge: Hi $user\n", "unknown fields ['user']"),
    ],
)
def test_a_bad_beat_fails_the_load_with_its_line(tmp_path: Path, beat: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(tmp_path, "beats:\n" + beat))
    assert message.replace("Value error, ", "") in str(caught.value)


def test_the_beat_log_keeps_each_evaluation_by_correlation(
    redis_client: Redis, workspace: str
) -> None:
    log = BeatHistory(redis_client, workspace)
    state = InteractionState(candidate=CANDIDATE, last_interpretation=said(ActType.COMMIT))
    log.append("s1", "corr-1", evaluate(state, BEATS))
    log.append("s1", "corr-2", evaluate(InteractionState(), BEATS))
    [entry] = log.for_correlation("corr-1")
    assert entry["session"] == "s1" and entry["fired"] == ["ReadyToCommit", "CandidateReady"]
    assert any(c["beat"] == "DriftDetected" and not c["held"] for c in entry["checks"])
