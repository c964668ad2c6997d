"""``deliberate classify --jsonl`` reads a line's ``before`` (earlier messages of its
conversation) through a scratch session of the bot's own loop, then reads ``text`` in that
context (issue 42): "yes" after a proposal agrees, after a factual question it answers; "same"
after someone's pick is a commit; "why Redis?" after "Redis and Kafka" asks; "ok" after
information acknowledges. No Redis at all (nothing listens where REDIS_URL points), bad
``before`` shapes named by line, and without ``before`` a line reads as it always did. A chat
model gets the same context as typed features in its frame, never the earlier words."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from core.runtime.conversations import MAX_BEFORE
from tests.bot.cli.process import Ran, command

NO_REDIS = {"REDIS_URL": "redis://127.0.0.1:1/0"}  # nothing listens there

Deliberate = Callable[..., Ran]


@pytest.fixture
def deliberate(capsys: pytest.CaptureFixture[str]) -> Deliberate:
    """The command, as a person runs it (with Redis unreachable unless ``env`` says), in this
    process: what it reads and prints is the point here, not the process."""

    def ran(*argv: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Ran:
        return command(capsys, *argv, env=env or NO_REDIS, stdin=stdin)

    return ran


def classify(
    deliberate: Deliberate, lines: list[dict[str, Any] | str], env: dict[str, str] | None = None
) -> tuple[list[dict[str, Any]], str, int]:
    text = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    done = deliberate("classify", "--jsonl", stdin=text, env=env)
    return [json.loads(x) for x in done.stdout.splitlines()], done.stderr, done.returncode


def after(text: str, *before: tuple[str, str], who: str = "bob") -> dict[str, Any]:
    return {"text": text, "who": who, "before": [{"who": w, "text": t} for w, t in before]}


CASES = [
    (after("yes", ("ann", "how about postgres with a replica?")), "commit"),
    (after("same", ("ann", "I picked Postgres and a replica")), "commit"),
    (after("why Redis?", ("ann", "we could use Redis and Kafka")), "question"),
    (after("ok", ("ann", "fyi the staging database was upgraded last night")), "tangent"),
]


def test_a_short_turn_is_read_in_the_context_the_bot_would_read_it_in(
    deliberate: Deliberate,
) -> None:
    asked = after("yes", ("ann", "is the build green on main?"))
    results, stderr, code = classify(deliberate, [line for line, _ in CASES] + [asked])
    assert code == 0, stderr
    routed = [r["routed_as"] for r in results]
    assert routed[:-1] == [act for _, act in CASES], results
    assert routed[-1] != "commit", results[-1]  # an answer to a question agrees to nothing


def test_without_before_a_line_reads_as_it_always_did(deliberate: Deliberate) -> None:
    alone = [{"text": line["text"]} for line, _ in CASES]
    with_who = [{"text": line["text"], "who": "bob"} for line, _ in CASES]
    empty = [{"text": line["text"], "before": []} for line, _ in CASES]
    first, _, _ = classify(deliberate, alone)
    assert classify(deliberate, with_who)[0] == first and classify(deliberate, empty)[0] == first
    in_context, _, _ = classify(deliberate, [line for line, _ in CASES])
    assert in_context != first  # (and the context does change what they read as)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ({"text": "yes", "before": "ann: lets go"}, '"before" must be a list'),
        ({"text": "yes", "before": [{"who": "ann"}]}, '"before" message 1 must be an object'),
        ({"text": "yes", "before": [{"text": "hi"}, "hi"]}, '"before" message 2 must be an'),
        ({"text": "yes", "before": [{"who": 7, "text": "hi"}]}, '"before" message 1: "who"'),
        ({"text": "yes", "who": ["ann"]}, "text, topic and who must be strings"),
        ({"text": "yes", "before": None}, '"before" must be a list'),
        ({"text": "yes", "before": {}}, '"before" must be a list'),
        (
            {"text": "yes", "before": [{"text": "hi"}] * (MAX_BEFORE + 1)},
            f'"before" holds {MAX_BEFORE + 1} messages: at most {MAX_BEFORE}',
        ),
    ],
)
def test_a_bad_before_is_named_by_line_and_the_rest_still_read(
    deliberate: Deliberate, line: dict[str, Any], said: str
) -> None:
    results, stderr, code = classify(deliberate, [line, {"text": "what if we did a raffle"}])
    assert code == 2
    assert [r["text"] for r in results] == ["what if we did a raffle"]
    assert f"deliberate classify: stdin line 1: {said}" in stderr, stderr


def test_a_long_topic_and_the_longest_writer_are_read_as_the_bot_reads_them(
    deliberate: Deliberate,
) -> None:
    line = after("yes", ("a" * 300, "how about postgres?"), who="b" * 300) | {"topic": "t" * 999}
    results, stderr, code = classify(deliberate, [line])
    assert code == 0 and results[0]["text"] == "yes", stderr


def test_eval_names_an_act_type_that_is_no_string(deliberate: Deliberate, tmp_path: Any) -> None:
    labelled = tmp_path / "odd.jsonl"
    labelled.write_text('{"text": "ok", "act_type": ["commit"]}\n', "utf-8")
    done = deliberate("classify", "--eval", str(labelled))
    assert done.returncode == 2
    assert f"{labelled}:1: act_type must be one of brainstorm" in done.stderr, done.stderr


def test_eval_reads_each_line_in_its_context(deliberate: Deliberate, tmp_path: Any) -> None:
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text(
        "".join(json.dumps(line | {"act_type": act}) + "\n" for line, act in CASES), "utf-8"
    )
    done = deliberate("classify", "--eval", str(labelled))
    assert done.returncode == 0, done.stderr
    assert "4 turns: accuracy **100.0%**" in done.stdout, done.stdout


def test_a_chat_model_gets_the_context_as_features_never_the_earlier_words(
    deliberate: Deliberate, openai_server: Any
) -> None:
    idea = '{"act_type": "brainstorm", "target": "current_candidate", "confidence": 0.9}'
    openai_server.reply(idea)  # the proposal: the offline loop puts it on the table
    openai_server.reply('{"act_type": "commit", "target": "current_candidate", "confidence": 0.9}')
    env = NO_REDIS | {
        "OPENAI_API_KEY": "test",
        "OPENAI_BASE_URL": openai_server.base_url,
        "DELIBERATE_MODEL": "local-model",
    }
    proposal = "how about postgres with a replica and nightly snapshots?"
    results, stderr, code = classify(deliberate, [after("yes", ("ann", proposal))], env)
    assert code == 0 and results[0]["classifier"] == "llm", stderr
    sent = [json.dumps(r) for r in openai_server.requests]
    assert len(sent) == 2  # the earlier message read first, as the bot would, then "yes"
    last = json.loads(openai_server.requests[-1]["messages"][-1]["content"])
    frame = last["context_state"]["turn_context"]
    assert frame["earlier_turns"] == [
        {"act": "brainstorm", "by": "someone else", "asked": True, "repeated_by_this_turn": 0.0}
    ]
    assert frame["candidate_on_table"]["asked_for_by"] == "someone else"
    assert "snapshots" not in sent[-1] and "replica" not in sent[-1]
