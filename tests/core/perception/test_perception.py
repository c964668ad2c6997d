"""The embedded turn classifier: deterministic, sensible on plain cases, unsure when it should
be, accurate on the labelled corpus in tests/data/, and rebuilt exactly from its training
corpus, which shares no turn with that evaluation corpus."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from core.config.core_config import load_config
from core.deliberation.interpretation import ActType, Target, TurnInterpretation
from core.perception import EmbeddedClassifier
from core.perception.embedded import unfamiliar
from core.perception.evaluation import evaluate, regex_baseline
from core.perception.features import features
from core.perception.model import (
    CHAT_TRAINING,
    HUMAN_TRAINING,
    MEETING_TRAINING,
    TRAINING,
    WEIGHTS,
    fit,
    load_rows,
    training_rows,
)
from core.runtime.conversations import contexts, conversation_of, training_set

CORPUS = Path(__file__).resolve().parents[2] / "data" / "utterances.jsonl"
classifier = EmbeddedClassifier()


@pytest.mark.parametrize(
    ("text", "act"),
    [
        ("ok let's ship that version", ActType.COMMIT),
        ("lgtm, lock it in", ActType.COMMIT),
        ("can you make it a bit punchier", ActType.REFINE),
        ("same idea but monthly instead of weekly", ActType.REFINE),
        ("what's the budget for this?", ActType.QUESTION),
        ("how many viewers did we have last stream?", ActType.QUESTION),
        ("what if we ran a raffle for subs", ActType.BRAINSTORM),
        ("another option: a two-day hackathon", ActType.BRAINSTORM),
        ("brb, grabbing coffee", ActType.TANGENT),
        ("did anyone catch the game last night lol", ActType.TANGENT),
    ],
)
def test_plain_turns_get_their_act(text: str, act: ActType) -> None:
    assert classifier.classify(text).act_type is act


def test_it_is_deterministic_and_bounded() -> None:
    for text in ("", "?", "🙂", "x" * 5000, "what if? ship it! lunch?"):
        first, second = classifier.classify(text, "topic"), classifier.classify(text, "topic")
        assert first == second and 0.0 <= first.confidence <= 1.0


def test_a_word_without_cues_is_never_a_sure_commit() -> None:
    """A lone word said no more than itself. (It was unsure, below 0.5, while the model knew
    only speech and our sentences; real written chat is full of one-word asides, "gah",
    "heh", which it now reads as tangents, with a confidence about 0.5.)"""
    turn = classifier.classify("blue")
    assert turn.confidence < 0.6 and turn.act_type is not ActType.COMMIT
    sure = classifier.classify("ok ship it")
    assert sure.routed(0.5) is ActType.COMMIT


def test_routing_never_turns_an_unsure_commit_into_a_commit() -> None:
    shaky = TurnInterpretation(
        act_type=ActType.COMMIT, target=Target.CURRENT_CANDIDATE, confidence=0.49
    )
    assert shaky.routed(0.5) is ActType.QUESTION and shaky.routed(0.4) is ActType.COMMIT


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("add it to the design doc", Target.ARTIFACT),
        ("put that in the meeting notes", Target.ARTIFACT),
        ("switching gears: the launch date", Target.NEW_TOPIC),
        ("anyone up for pizza", Target.NEW_TOPIC),
        ("make it shorter", Target.CURRENT_CANDIDATE),
    ],
)
def test_targets(text: str, target: Target) -> None:
    assert classifier.classify(text).target is target


def test_the_topic_pulls_a_shared_subject_away_from_a_tangent() -> None:
    text = "the coffee machine sponsor could fund the charity stream"
    with_topic = classifier.scores(text, "coffee sponsor for the charity stream")
    unrelated = classifier.scores(text, "database choice")
    assert with_topic[ActType.TANGENT] < unrelated[ActType.TANGENT]


# Measured 90.0% (held-out half 87.2%) with the learned model; the rules alone measured 77.5%.
# Since real written chat trains it too, 85.0% (held-out half 81.7%): on the floor; with 8,493
# chat messages and 1,000 turns of ours in chat register, 87.2% (held-out half 85.0%).
ACCURACY_FLOOR = 0.85


def _rows(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_accuracy_on_the_labelled_corpus_reaches_the_floor() -> None:
    rows = _rows(CORPUS)
    assert len(rows) >= 300
    assert {r["act_type"] for r in rows} == {a.value for a in ActType}
    right = sum(
        classifier.classify(r["text"], r.get("topic")).act_type.value == r["act_type"] for r in rows
    )
    assert right / len(rows) >= ACCURACY_FLOOR, f"{right}/{len(rows)}"


def _same_text(text: str) -> str:
    return " ".join(text.lower().split())


def test_the_training_corpus_shares_no_turn_with_the_evaluation_corpus() -> None:
    training = load_rows()
    assert len(training) >= 1200
    assert {r["act_type"] for r in training} == {a.value for a in ActType}
    shared = {_same_text(r["text"]) for r in training} & {
        _same_text(r["text"]) for r in _rows(CORPUS)
    }
    assert not shared, f"{len(shared)} evaluation turns are in the training corpus"


HUMAN = {
    name: Path(__file__).resolve().parents[2] / "data" / f"human_{name}.jsonl"
    for name in ("calibration", "test")
}


def test_no_real_human_evaluation_turn_is_in_training_or_in_the_other_split() -> None:
    """The held-out split of real people's spoken turns, and the calibration split, hold no
    text the speech or our training files hold, none of each other's, and none twice. (Real
    written chat holds some of the same short turns, "right", "absolutely": people say
    them in both.)"""
    trained = {_same_text(r["text"]) for r in load_rows(TRAINING, HUMAN_TRAINING)}
    splits = {name: [_same_text(r["text"]) for r in _rows(path)] for name, path in HUMAN.items()}
    for name, texts in splits.items():
        assert len(texts) >= 500, name
        assert len(set(texts)) == len(texts), f"a text twice in the {name} split"
        assert not set(texts) & trained, f"{name} turns in training"
    assert not set(splits["calibration"]) & set(splits["test"])
    human = load_rows(HUMAN_TRAINING)
    assert all(r["source"].startswith("mrda:") for r in human) and len(human) >= 2000
    meetings = {name: {r["source"] for r in _rows(path)} for name, path in HUMAN.items()} | {
        "train": {r["source"] for r in human}
    }
    assert (
        not meetings["train"] & meetings["test"] and not meetings["train"] & meetings["calibration"]
    ), "a meeting in two splits"


CHAT = {
    name: Path(__file__).resolve().parents[2] / "data" / f"chat_{name}.jsonl"
    for name in ("calibration", "test")
}


def _log(source: str) -> str:
    return source.removeprefix("irc:").rsplit(":", 1)[0]


def test_the_written_chat_test_split_comes_from_logs_no_message_of_which_trains() -> None:
    """Split by log: the held-out messages come from other days' logs than any training
    message; the calibration messages are other messages of two training logs; no message
    is in two splits."""
    trained = load_rows(CHAT_TRAINING)
    splits = {name: _rows(path) for name, path in CHAT.items()}
    assert len(trained) >= 2500 and len(splits["test"]) >= 700 and len(splits["calibration"]) >= 300
    sources = {name: {r["source"] for r in rows} for name, rows in splits.items()}
    sources["training"] = {r["source"] for r in trained}
    assert not {_log(s) for s in sources["test"]} & {_log(s) for s in sources["training"]}
    assert not sources["calibration"] & sources["training"]
    assert not sources["calibration"] & sources["test"]
    for rows in (*splits.values(), trained):
        assert {r["act_type"] for r in rows} == {a.value for a in ActType}


def test_on_held_out_written_chat_it_reads_better_than_the_regular_expressions() -> None:
    """Real people's written chat, never trained on: at least 70%, above the six-regex
    baseline, and a false commit at most 5% of the time, as the loop routes the acts."""
    rows = _rows(CHAT["test"])
    truth = [ActType(r["act_type"]) for r in rows]
    gate = load_config(None).perception.min_confidence
    ours = evaluate(truth, [classifier.classify(r["text"]).routed(gate) for r in rows])
    baseline = evaluate(truth, [regex_baseline(r["text"]) for r in rows])
    assert ours.accuracy >= 0.70 and ours.accuracy > baseline.accuracy
    assert ours.false_commit_rate <= 0.05


def test_training_is_deterministic() -> None:
    subset = load_rows()[::7]
    assert fit(subset, epochs=3).dumps() == fit(subset, epochs=3).dumps()


def test_the_shipped_weights_are_a_retrain_of_the_training_corpus() -> None:
    """Catches a training corpus, feature or cue edited without retraining. Compared within
    rounding, not byte for byte: another platform's math library may differ in a last digit."""
    shipped = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    rows = training_rows()
    again = fit(*training_set(rows)).to_json()
    assert again["classes"] == shipped["classes"]
    assert again["bias"] == pytest.approx(shipped["bias"], abs=1e-3)
    zero = [0.0] * len(shipped["classes"])
    for name in again["weights"].keys() | shipped["weights"].keys():
        ours, theirs = again["weights"].get(name, zero), shipped["weights"].get(name, zero)
        assert ours == pytest.approx(theirs, abs=1e-3), name


@pytest.mark.parametrize(
    "text",
    [
        "我们用postgres吧",  # Chinese around one English word: "let's use postgres"
        "这个方案可以",
        "давайте выберем постгрес",
        "لنستخدم بوستجرس",
        "ポスグレにしよう",
        "포스트그레스로 하자",
        "asdf qwer zxcv",  # Latin letters, words the model never learned
    ],
)
def test_a_turn_the_model_cannot_read_is_unsure_on_purpose(text: str) -> None:
    turn = EmbeddedClassifier().classify(text)
    assert turn.act_type is ActType.QUESTION and turn.confidence == 0.0
    assert turn.routed(0.01) is ActType.QUESTION  # never a commit, whatever the gate


@pytest.mark.parametrize(
    "text", ["ok let's do that", "sounds good, ship it", "let's use cockroachdb with raft"]
)
def test_acceptance_is_read_as_such_names_unknown_to_it_or_not(text: str) -> None:
    turn = EmbeddedClassifier().classify(text)
    assert turn.act_type is ActType.COMMIT and turn.confidence > 0.5


@pytest.mark.parametrize("text", ["ok", "ok thanks", "geser: ok"])
def test_a_bare_ok_acknowledges_and_is_not_taken_for_acceptance(text: str) -> None:
    """In real written chat a bare "ok" acknowledges what was said far more often than it
    accepts a proposal (18 of 19 in the labelled IRC messages): it is not a commit."""
    assert EmbeddedClassifier().classify(text).act_type is not ActType.COMMIT


def test_an_english_question_about_a_name_it_never_saw_is_not_unsure() -> None:
    said = "should we move the metrics to timescaledb?"
    assert not unfamiliar(said, features(said))
    assert EmbeddedClassifier().classify(said).confidence > 0


MEETINGS = {
    name: Path(__file__).resolve().parents[2] / "data" / f"meeting_{name}.jsonl"
    for name in ("dev", "test")
}


def test_the_meeting_splits_are_whole_meetings_no_message_of_which_trains() -> None:
    """Split by meeting: the held-out and dev messages come from other meetings than any
    training message, each meeting whole and in its order (so that each is read in
    context), every message with its writer."""
    trained = load_rows(MEETING_TRAINING)
    splits = {name: _rows(path) for name, path in MEETINGS.items()} | {"training": trained}
    logs = {name: {conversation_of(r) for r in rows} for name, rows in splits.items()}
    assert None not in set().union(*logs.values())
    assert not logs["test"] & logs["training"] and not logs["dev"] & logs["training"]
    assert not logs["test"] & logs["dev"]
    assert [len(splits[n]) for n in ("training", "dev", "test")] == [1381, 228, 2766]
    for rows in splits.values():
        assert all(isinstance(r["who"], str) and r["who"] for r in rows)
        runs = [log for log, _ in itertools.groupby(conversation_of(r) for r in rows)]
        assert len(runs) == len(set(runs)), "a meeting in two runs"
        for log in runs:
            lines = [int(r["source"].rsplit(":", 1)[1]) for r in rows if conversation_of(r) == log]
            assert lines == sorted(set(lines)), f"{log} out of order"


def test_read_in_context_it_reads_people_deciding_together_better_than_the_regexes() -> None:
    """Real people deciding together (meetings no message of which trains), each message
    read after the ones before it as the bot reads them: at least 75% (77.3% measured, 81.1%
    on the labels the annotators were sure of), 10 points over the six regexes (12.2), a
    false commit at most 3% of the time (1.8%), two commits in five found (45%); read alone
    it does worse (75.3%), and the context is what it reads better with."""
    rows = _rows(MEETINGS["test"])
    truth = [ActType(r["act_type"]) for r in rows]
    gate = load_config(None).perception.min_confidence
    read_in = contexts(rows, classifier)
    pairs = zip(rows, read_in, strict=True)
    ours = evaluate(truth, [classifier.classify(r["text"], None, c).routed(gate) for r, c in pairs])
    alone = evaluate(truth, [classifier.classify(r["text"]).routed(gate) for r in rows])
    baseline = evaluate(truth, [regex_baseline(r["text"]) for r in rows])
    assert ours.accuracy >= 0.75 and ours.accuracy - baseline.accuracy >= 0.10
    assert ours.false_commit_rate <= 0.03 and ours.recall(ActType.COMMIT) >= 0.4
    assert ours.accuracy > alone.accuracy
