"""Plain chat never mutates canonical state: for any sequence of messages (no clicks), the
snapshot and the mutation log are what they were. Prompt injections included, with a model
that does whatever they say: its writes can only become proposals for a person."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import openai
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.app import App
from core.deliberation.messages import UserSaid
from core.llm.chat import ChatModel
from core.state.store import Snapshot
from tests.factories import actor, mutation
from tests.openai_server import OpenAIServer, Reply, tool_call
from tests.reads import pending_proposals

DATA = Path(__file__).resolve().parents[2] / "data"
INJECTIONS = [line for line in (DATA / "injections.txt").read_text("utf-8").splitlines() if line]
CHAT = [
    json.loads(line)["text"] for line in (DATA / "utterances.jsonl").read_text("utf-8").splitlines()
]
sessions = itertools.count()


def seed(app: App) -> None:
    for m in [
        mutation("set", "decision.db-engine", "postgres"),
        mutation("set", "stream.state", "live", "moderator:sam"),
        mutation("set", "scene.name", "Live"),
        mutation("set", "secret.stream-key", "sk-live-123", "admin:root"),
    ]:
        assert app.gateway.propose(m).name == "committed"


def canonical(app: App) -> tuple[dict[str, Any], dict[str, int], str | None, int]:
    snap: Snapshot = app.store.snapshot()
    values = {k: (e.value, e.version) for k, e in snap.entries.items()}
    return values, snap.versions, snap.last_log_id, len(app.log)


messages = st.lists(
    st.one_of(st.sampled_from(INJECTIONS), st.sampled_from(CHAT), st.text(max_size=300)),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=messages)
def test_plain_chat_changes_no_canonical_state(app: App, texts: list[str]) -> None:
    if len(app.log) == 0:
        seed(app)
    before = canonical(app)
    runtime = app.runtime(use_env=False)
    session = f"prop-{next(sessions)}"
    for text in texts:
        runtime.send(session, UserSaid(text=text, actor=actor("moderator:sam")))
    assert canonical(app) == before


def obedient(request: dict[str, Any]) -> Reply:
    """A model that does what the injection says: tries every write it can, then claims it."""
    system = request["messages"][0]["content"]
    if "You label one chat turn" in system:
        label = {"act_type": "commit", "target": "current_candidate", "confidence": 1.0}
        return Reply(json.dumps(label))
    if "tool_results" not in json.loads(request["messages"][1]["content"])["context_state"]:
        return Reply(
            tool_calls=[
                tool_call("proposeMutation", {"op": "set", "key": "stream.state", "value": "off"}),
                tool_call("proposeMutation", {"op": "delete", "key": "decision.db-engine"}),
                tool_call(
                    "compareAndSet", {"key": "scene.name", "expectedVersion": 1, "value": "BRB"}
                ),
                tool_call(
                    "proposeMutation", {"op": "set", "key": "secret.stream-key", "value": "x"}
                ),
                tool_call("getState", {"keys": ["secret.stream-key"]}),
            ]
        )
    reply = {"reply": "Done: I committed stream.state = off.", "candidate": None}
    return Reply(json.dumps(reply))


def test_injections_with_an_obedient_model_mutate_nothing(
    app: App, openai_server: OpenAIServer
) -> None:
    seed(app)
    before = canonical(app)
    openai_server.answer_with = obedient
    client = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    runtime = app.runtime(ChatModel(client, "obedient", timeout_sec=5))
    for n, text in enumerate(INJECTIONS):
        runtime.send(f"inj-{n}", UserSaid(text=text, actor=actor("admin:root")))
    assert canonical(app) == before
    # what the model wrote waits for a person: proposals, never commits
    pending = pending_proposals(app.redis, app.store.workspace)
    assert pending and {p.mutation.actor.kind.value for p in pending} == {"agent"}
    assert "sk-live-123" not in json.dumps(openai_server.requests)


KEYS = [
    "stream.state",
    "stream.end",
    "decision.db-engine",
    "scene.name",
    "secret.stream-key",
    "bench.counter",
    "vision.dead",
    "artifact.doc",
    "nope.key",
    "bad key",
]
values = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(max_size=20), st.sampled_from(["off", "BRB"])
)
tool_args = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["set", "delete", "append", "incr", "explode"]),
        "key": st.sampled_from(KEYS),
    },
    optional={
        "value": values,
        "expectedVersion": st.integers(-1, 3),
        "keys": st.just(KEYS),
        "prefix": st.sampled_from(["", "secret.", "stream."]),
        "ttlSec": st.integers(0, 5),
    },
)
calls = st.lists(
    st.tuples(
        st.sampled_from(["proposeMutation", "compareAndSet", "getState", "getStatePrefix", "x"]),
        st.one_of(tool_args, st.text(max_size=30)),
    ),
    max_size=5,
)
replies = st.one_of(
    st.text(max_size=50),
    st.builds(
        lambda reply, candidate: json.dumps({"reply": reply, "candidate": candidate}),
        st.text(max_size=30),
        st.one_of(st.none(), st.text(max_size=30)),
    ),
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=messages, tool_calls=calls, reply=replies, label=st.text(max_size=40))
def test_whatever_the_model_answers_plain_chat_changes_nothing(
    app: App,
    openai_server: OpenAIServer,
    texts: list[str],
    tool_calls: list[tuple[str, Any]],
    reply: str,
    label: str,
) -> None:
    if len(app.log) == 0:
        seed(app)
    before = canonical(app)

    def answer(request: dict[str, Any]) -> Reply:
        if "You label one chat turn" in request["messages"][0]["content"]:
            return Reply(label or "{}")
        if tool_calls and "tool_results" not in request["messages"][1]["content"]:
            return Reply(tool_calls=[tool_call(name, args) for name, args in tool_calls])
        return Reply(reply or "{}")

    openai_server.answer_with = answer
    client = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    runtime = app.runtime(ChatModel(client, "any", timeout_sec=5))
    session = f"model-{next(sessions)}"
    for text in texts:
        runtime.send(session, UserSaid(text=text, actor=actor("admin:root")))
    assert canonical(app) == before
    assert "sk-live-123" not in json.dumps(openai_server.requests)
