"""The measures ``deliberate classify --eval`` and ``bench/`` report, and the command itself:
on hand-counted cases, on properties that hold for any labelling, and on files with bad
lines in them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.deliberation.interpretation import ActType
from core.perception import EmbeddedClassifier
from core.perception.evaluation import evaluate, regex_baseline, table
from tests.bot.cli.process import run

B, R, C, Q, T = (ActType(a) for a in ("brainstorm", "refine", "commit", "question", "tangent"))


def test_hand_counted_scores() -> None:
    scores = evaluate([C, C, Q, B, T], [C, Q, C, B, T])
    assert scores.accuracy == 3 / 5
    assert scores.precision(C) == 1 / 2 and scores.recall(C) == 1 / 2
    assert scores.false_commit_rate == 1 / 3  # the question taken for a commit, of 3
    assert scores.missed_commit_rate == 1 / 2
    assert scores.confusion()[C][Q] == 1 and scores.confusion()[Q][C] == 1
    assert scores.acts == [B, C, Q, T]  # refine: carried by no turn, left out


@given(st.lists(st.tuples(st.sampled_from(ActType), st.sampled_from(ActType)), min_size=1))
def test_the_measures_agree_with_each_other(pairs: list[tuple[ActType, ActType]]) -> None:
    truth, predicted = [t for t, _ in pairs], [p for _, p in pairs]
    scores = evaluate(truth, predicted)
    matrix = scores.confusion()
    assert sum(sum(row.values()) for row in matrix.values()) == len(pairs)
    assert scores.accuracy == sum(matrix[a][a] for a in ActType) / len(pairs)
    for act in scores.acts:
        assert 0 <= scores.precision(act) <= 1 and 0 <= scores.recall(act) <= 1
        assert scores.recall(act) == matrix[act][act] / scores.count(act)
    others = sum(1 for t in truth if t is not C)
    taken = sum(1 for t, p in pairs if t is not C and p is C)
    assert scores.false_commit_rate == (taken / others if others else 0.0)
    assert len(table(scores)) == 7 + 2 * len(scores.acts)  # two tables of a row per act


def test_lengths_must_match() -> None:
    with pytest.raises(ValueError, match="2 labels, 1 predictions"):
        evaluate([C, C], [C])


@pytest.mark.parametrize(
    ("text", "act"),
    [
        ("should we use postgres?", Q),
        ("ok", C),
        ("sounds good", C),
        ("thanks everyone", T),
        ("I think redis would do", B),
        ("we keep the old schema for now", B),
        ("yes but only if the budget allows it and legal signs off", B),
    ],
)
def test_the_regex_baseline_is_the_six_lines_it_says(text: str, act: ActType) -> None:
    assert regex_baseline(text) is act


def test_eval_prints_the_table_and_names_every_bad_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    texts = ["should we shard by tenant?", "ok let's ship it", "hi all", "what about a queue"]
    classifier = EmbeddedClassifier()
    rows = [{"text": t, "act_type": classifier.classify(t).act_type.value} for t in texts]
    lines = [json.dumps(r) for r in rows]
    lines.insert(1, "{not json")
    lines.insert(3, json.dumps({"text": "x", "act_type": "decide"}))
    lines.insert(4, json.dumps({"act_type": "commit"}))
    path = tmp_path / "team.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run(
        capsys, "w", "--config", str(_confident(tmp_path)), "classify", "--eval", str(path)
    )
    assert code == 2  # some lines were left out, and it says so
    assert f"{path}:2: not JSON" in err
    assert f"{path}:4: act_type must be one of brainstorm, refine, commit, question, tangent" in err
    assert f"{path}:5: no 'text' field" in err
    assert "3 line(s)" in err
    assert "4 turns: accuracy **100.0%**" in out  # labelled as it reads them, routed alike
    assert "| label \\ predicted |" in out


def test_eval_of_a_file_with_no_labelled_line_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n", encoding="utf-8")
    code, _, err = run(capsys, "w", "classify", "--eval", str(path))
    assert code == 2 and "no labelled line to measure on" in err
    code, _, err = run(capsys, "w", "classify", "--eval", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "missing.jsonl" in err


def _confident(tmp_path: Path) -> Path:
    """A config whose gate lets every reading through as it is (so labels taken from the
    classifier's own readings are all right)."""
    path = tmp_path / "open.yaml"
    path.write_text("perception:\n  min_confidence: 0\n", encoding="utf-8")
    return path
