"""What the runtime and the model calls count: each turn people take, the act its
classifier read (and which classifier), each model call by purpose and outcome, and how long
it took. Offline, and with a model (the local OpenAI-protocol server) that answers, fails,
or answers what cannot be used. Real Redis; the counts as ``/metrics`` reads them."""

from __future__ import annotations

import openai
import pytest

from bot.app import App
from core.deliberation.messages import UserSaid
from core.llm.chat import ChatModel
from core.metrics import CLASSIFIED, MODEL_CALL_SECONDS, MODEL_CALLS, TURNS, Counts, counts_key
from core.perception import EmbeddedClassifier
from core.runtime.runner import Runtime
from tests.conftest import delete_workspace
from tests.core.metrics.counted import counted
from tests.factories import actor
from tests.model_script import kind, label, output, proposing
from tests.openai_server import OpenAIServer, Reply

ALICE = actor("user:alice")
SAID = [
    "which database for the billing service?",
    "what if we used postgres with read replicas",
    "yes let's go with that",
]


def with_model(app: App, server: OpenAIServer) -> Runtime:
    client = openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0)
    return app.runtime(ChatModel(client, "test-model", timeout_sec=5))


def counts(app: App) -> Counts:
    return counted(app.redis, app.store.workspace)


def calls(seen: Counts) -> dict[tuple[str, ...], int]:
    return {labels: n for labels, n in seen.series(MODEL_CALLS).items() if n}


def test_offline_each_turn_and_its_label_are_counted(app: App) -> None:
    runtime = app.runtime(use_env=False)
    for text in SAID:
        runtime.send("s1", UserSaid(text=text, actor=ALICE))
    expected: dict[tuple[str, str], int] = {}
    for text in SAID:
        act = EmbeddedClassifier().classify(text).act_type.value
        expected[(act, "embedded")] = expected.get((act, "embedded"), 0) + 1
    seen = counts(app)
    assert seen.get(TURNS) == len(SAID)
    assert seen.series(CLASSIFIED) == expected
    assert calls(seen) == {} and seen.histogram(MODEL_CALL_SECONDS) == {}


def test_model_calls_count_by_purpose_and_outcome_with_their_time(
    app: App, openai_server: OpenAIServer
) -> None:
    def answer(request: dict[str, object]) -> Reply:
        if kind(request) == "classify":
            return label("refine")
        return output("Read replicas suit a read-heavy billing service.", "postgres")

    openai_server.answer_with = answer
    runtime = with_model(app, openai_server)
    runtime.send("s1", UserSaid(text=SAID[1], actor=ALICE))
    seen = counts(app)
    assert seen.get(TURNS) == 1
    assert seen.series(CLASSIFIED) == {("refine", "llm"): 1}
    assert calls(seen) == {("classify", "ok"): 1, ("generate", "ok"): 1}
    timed = seen.histogram(MODEL_CALL_SECONDS)
    assert {labels: h.count for labels, h in timed.items()} == {("classify",): 1, ("generate",): 1}


def test_failed_and_unusable_calls_are_counted_as_such(
    app: App, openai_server: OpenAIServer
) -> None:
    """The classifier's call fails (HTTP 500): the embedded classifier labels the turn. The
    responder's answer is not the JSON asked for: invalid, and the offline responder
    answers. Both calls are timed, the slow one in no bucket under its delay."""

    def answer(request: dict[str, object]) -> Reply:
        if kind(request) == "classify":
            return Reply(status=500, delay=0.3)
        return Reply("not json at all")

    openai_server.answer_with = answer
    runtime = with_model(app, openai_server)
    runtime.send("s1", UserSaid(text=SAID[0], actor=ALICE))
    seen = counts(app)
    act = EmbeddedClassifier().classify(SAID[0]).act_type.value
    assert seen.series(CLASSIFIED) == {(act, "embedded"): 1}
    assert calls(seen) == {("classify", "error"): 1, ("generate", "invalid"): 1}
    slow = seen.histogram(MODEL_CALL_SECONDS)[("classify",)]
    assert dict(slow.buckets)["0.25"] == 0 and slow.count == 1
    assert slow.sum_sec >= 0.3


def test_each_round_of_a_model_using_its_tools_is_a_call(
    app: App, openai_server: OpenAIServer
) -> None:
    openai_server.answer_with = proposing("decision.scene", "BRB")
    with_model(app, openai_server).send("s1", UserSaid(text="let's go brb", actor=ALICE))
    assert calls(counts(app)) == {("classify", "ok"): 1, ("generate", "ok"): 2}


@pytest.mark.parametrize("model", [False, True], ids=["offline", "model"])
def test_counts_are_the_workspaces_own(
    app: App, openai_server: OpenAIServer, model: bool, workspace: str
) -> None:
    """One model serves two workspaces: each counts its own turns and calls."""
    openai_server.answer_with = proposing("decision.x", "y")
    other = app.for_workspace(f"{workspace}-other", rules=False)
    model_client = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    shared = ChatModel(model_client, "test-model", timeout_sec=5) if model else None
    ours = app.runtime(shared, use_env=False)
    theirs = other.runtime(shared, use_env=False)
    ours.send("s1", UserSaid(text=SAID[0], actor=ALICE))
    theirs.send("s1", UserSaid(text=SAID[0], actor=ALICE))
    theirs.send("s1", UserSaid(text=SAID[1], actor=ALICE))
    try:
        mine, yours = counts(app), counts(other)
        assert (mine.get(TURNS), yours.get(TURNS)) == (1, 2)
        if model:
            assert calls(mine)[("classify", "ok")] == 1
            assert calls(yours)[("classify", "ok")] == 2
    finally:
        delete_workspace(other.redis, other.store.workspace)
        other.redis.delete(counts_key(other.store.workspace))
