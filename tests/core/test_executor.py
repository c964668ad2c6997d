"""The executor: offline templates, the one frame per turn, and the model responder against a
local OpenAI-protocol server, falling back to the templates on any bad reply."""

from __future__ import annotations

import json

import openai
import pytest

from core.executor import ExecutorOutput, OfflineResponder, Turn, frame_for
from core.interpretation import ActType
from core.llm.chat import ChatModel
from core.memory import Candidate, ContextState
from core.responder_model import ModelResponder
from tests.openai_server import OpenAIServer

CANDIDATE = Candidate(id="c1", text="Postgres with read replicas", version=1)
offline = OfflineResponder()


def turn(act: ActType, text: str, candidate: Candidate | None = CANDIDATE) -> Turn:
    return Turn(
        user_input=text,
        act=act,
        candidate=candidate,
        context_state=ContextState(constraints=["EU only"]),
    )


def test_offline_brainstorm_puts_the_idea_on_the_table() -> None:
    out = offline.respond(turn(ActType.BRAINSTORM, "  what if   we used CockroachDB  ", None))
    assert out.candidate == "what if we used CockroachDB"


def test_offline_refine_revises_and_commit_never_commits() -> None:
    refined = offline.respond(turn(ActType.REFINE, "only in eu-west"))
    assert refined.candidate == "Postgres with read replicas (only in eu-west)"
    committed = offline.respond(turn(ActType.COMMIT, "ship it"))
    assert committed.candidate is None and "use the button" in committed.reply


def test_offline_question_becomes_an_open_question() -> None:
    out = offline.respond(turn(ActType.QUESTION, "how much would replicas cost?"))
    assert out.candidate is None
    assert out.context_state_delta.add_open_questions == ["how much would replicas cost?"]


@pytest.mark.parametrize("act", list(ActType))
def test_offline_always_answers(act: ActType) -> None:
    for candidate in (None, CANDIDATE):
        assert offline.respond(turn(act, "", candidate)).reply


def test_the_frame_carries_context_state_and_candidate_never_a_transcript() -> None:
    system, user = frame_for(turn(ActType.REFINE, "shorter")).messages()
    payload = json.loads(user["content"])
    assert payload["user_input"] == "shorter"
    assert payload["context_state"]["candidate"] == "Postgres with read replicas"
    assert payload["context_state"]["context_state"]["constraints"] == ["EU only"]
    assert "Rewrite the current candidate" in system["content"]


def responder(server: OpenAIServer) -> ModelResponder:
    client = openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0)
    return ModelResponder(ChatModel(client, "m", timeout_sec=5), offline)


def test_a_valid_model_reply_is_used(openai_server: OpenAIServer) -> None:
    openai_server.reply(
        json.dumps(
            {
                "reply": "Try CockroachDB",
                "candidate": "CockroachDB",
                "context_state_delta": {"add_constraints": ["multi-region"]},
            }
        )
    )
    out, source = responder(openai_server).answer(turn(ActType.BRAINSTORM, "other options?"))
    assert source == "model" and out.candidate == "CockroachDB"
    assert out.context_state_delta.add_constraints == ["multi-region"]
    assert [m["role"] for m in openai_server.requests[0]["messages"]] == ["system", "user"]


@pytest.mark.parametrize(
    "reply",
    [
        "Sure! Here is an idea.",
        json.dumps({"reply": "done", "mutations": [{"op": "set", "key": "stream.state"}]}),
        json.dumps({"reply": "ok", "context_state_delta": {"set_stream_state": "off"}}),
        json.dumps({"reply": ""}),
    ],
)
def test_a_bad_model_reply_falls_back_to_the_templates(
    openai_server: OpenAIServer, reply: str
) -> None:
    openai_server.reply(reply)
    out, source = responder(openai_server).answer(turn(ActType.BRAINSTORM, "an idea", None))
    assert source == "offline"
    assert out == offline.respond(turn(ActType.BRAINSTORM, "an idea", None))


def test_a_failing_model_falls_back(openai_server: OpenAIServer) -> None:
    openai_server.reply(status=503)
    assert responder(openai_server).answer(turn(ActType.TANGENT, "lunch?"))[1] == "offline"


def test_output_fields_are_bounded() -> None:
    with pytest.raises(ValueError):
        ExecutorOutput(reply="x" * 4001)
