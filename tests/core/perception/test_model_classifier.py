"""The model classifier's prompt carries labelled real turns, and the same harness that
measures the embedded classifier measures the model: ``deliberate classify --eval`` and
``bench/classifier_accuracy.py --model``, here against the local server speaking the
OpenAI protocol (with ``OPENAI_BASE_URL`` they measure a real endpoint the same way)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import openai
import pytest

from core.deliberation.interpretation import ActType
from core.llm.chat import ChatModel
from core.perception import EmbeddedClassifier
from core.perception.evaluation import evaluate, regex_baseline
from core.perception.llm import EXAMPLES, LLMClassifier
from core.perception.model import CHAT_TRAINING, load_rows
from tests.bot.cli.process import run
from tests.openai_server import OpenAIServer, Reply

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
EVALUATION = (
    "meeting_test.jsonl",
    "meeting_dev.jsonl",
    "chat_test.jsonl",
    "chat_calibration.jsonl",
    "human_test.jsonl",
    "human_calibration.jsonl",
    "utterances.jsonl",
)


def _same(text: str) -> str:
    return " ".join(text.lower().split())


def test_every_act_has_labelled_examples_from_training_never_from_evaluation() -> None:
    assert Counter(act for act, _ in EXAMPLES) == {
        "brainstorm": 3,
        "commit": 3,
        "question": 3,
        "tangent": 3,
        "refine": 2,
    }
    chat = {(r["act_type"], r["text"]) for r in load_rows(CHAT_TRAINING)}
    for act, text in EXAMPLES:  # real people's written chat, from the training split
        assert (act, text) in chat, text
    held = {_same(r["text"]) for name in EVALUATION for r in load_rows(DATA / name)}
    assert not [text for _, text in EXAMPLES if _same(text) in held]


def _user_input(request: dict[str, Any]) -> str:
    frame = json.loads(request["messages"][-1]["content"])
    return str(frame["user_input"])


def _as_baseline(broken: set[str]) -> Any:
    """The server reads a turn as the six-regex baseline does (so the expected score is
    known), and answers garbage for the texts in ``broken``."""

    def answer(request: dict[str, Any]) -> Reply:
        text = _user_input(request)
        if text in broken:
            return Reply("the act is probably commit")
        act = regex_baseline(text).value
        return Reply(
            json.dumps({"act_type": act, "target": "current_candidate", "confidence": 0.9})
        )

    return answer


def test_the_prompt_carries_the_examples_and_only_this_turn(openai_server: OpenAIServer) -> None:
    openai_server.answer_with = _as_baseline(set())
    client = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    classifier = LLMClassifier(ChatModel(client, "m", timeout_sec=10), EmbeddedClassifier())
    for text in ("should we shard by tenant?", "ok"):
        turn, reader = classifier.interpret(text)
        assert (turn.act_type, reader) == (regex_baseline(text), "llm")
    _, second = (r["messages"] for r in openai_server.requests)
    assert [m["role"] for m in second] == ["system", "user"]  # stateless: no earlier turn
    for act, text in EXAMPLES:
        assert f"{json.dumps(text)} -> {act}" in second[0]["content"]
    assert "shard" not in json.dumps(second)


def test_classify_eval_measures_the_model_and_counts_its_failures(
    openai_server: OpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = load_rows(DATA / "human_test.jsonl")[:40]
    broken = {rows[3]["text"], rows[17]["text"]}
    openai_server.answer_with = _as_baseline(broken)
    path = tmp_path / "team.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    code, out, _ = run(capsys, "w", "classify", "--eval", str(path))
    assert code == 0
    fallback = EmbeddedClassifier()
    expected = evaluate(
        [ActType(r["act_type"]) for r in rows],
        [
            fallback.classify(r["text"]).routed(0.45)
            if r["text"] in broken
            else regex_baseline(r["text"])
            for r in rows
        ],
    )
    assert f"40 turns: accuracy **{expected.accuracy:.1%}**" in out
    assert f"false-commit **{expected.false_commit_rate:.1%}**" in out
    assert "the model read 38 turn(s); 2 fell back to the embedded classifier" in out
    assert len(openai_server.requests) == 40


def test_the_bench_measures_the_model_on_every_corpus(openai_server: OpenAIServer) -> None:
    openai_server.answer_with = _as_baseline(set())
    env = {**os.environ, "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": openai_server.base_url}
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "classifier_accuracy.py"),
            "--model",
            "--limit",
            "12",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # answered as the baseline answers: the model's score is the baseline's, on each corpus
    rows = re.findall(
        r"^\| (real people deciding together|real written chat|real speech|ours)[^|]*"
        r"\| 12 \| \*\*([\d.]+)%\*\* \| ([\d.]+)%",
        done.stdout,
        re.M,
    )
    assert [name for name, _, _ in rows] == [
        *["real people deciding together"] * 2,  # alone, then in context
        *["real written chat"] * 2,
        "real speech",
        "ours",
    ]
    assert all(model == baseline for _, model, baseline in rows)
    assert "read by: llm 72" in done.stdout
    # read in context, each message first goes through the scratch loop: read once more
    assert len(openai_server.requests) == 72 + 2 * 12
