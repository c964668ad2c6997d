"""Whole conversations with a model: the real ``openai`` client against a local server that
speaks the OpenAI protocol. Every request it records is one system and one user message,
with no text of earlier turns except what ``context_state`` carries (the topic, and the
refinements asked of the candidate); the model's tools
propose, people apply; and anything malformed falls back to the offline parts."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from bot.app import App
from bot.reports.trace import collect
from core.deliberation.actions import ActionType
from core.deliberation.messages import ActionClicked, UserSaid
from core.deliberation.view import View
from core.llm.chat import ChatModel
from core.runtime.events import OutcomeEvent
from core.runtime.runner import Runtime
from core.runtime.sessions import SessionStore
from core.state.actor import ActorKind
from tests.factories import actor, mutation
from tests.model_script import kind, label, output, proposing, user_payload
from tests.openai_server import OpenAIServer, Reply, tool_call
from tests.reads import pending_proposals

ALICE, SAM = actor("user:alice"), actor("moderator:sam")


def runtime(app: App, server: OpenAIServer) -> Runtime:
    client = openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0)
    return app.runtime(ChatModel(client, "test-model", timeout_sec=5))


TURNS = [
    ("brainstorm", "token-alpha: what if the launch party was a rooftop thing"),
    ("refine", "token-bravo: make it smaller, team only"),
    ("question", "token-charlie: what budget do we have"),
    ("tangent", "token-delta: anyone seen my charger"),
    ("refine", "token-echo: on a friday"),
]


def scripted(request: dict[str, Any]) -> Reply:
    said = user_payload(request)["user_input"]
    act = next(a for a, text in TURNS if text == said)
    if kind(request) == "classify":
        return label(act)
    if act == "brainstorm":
        return output("A rooftop launch party?", "Rooftop launch party", summary="launch party")
    if act == "refine":
        return output("Revised.", f"Rooftop launch party ({said[12:]})")
    if act == "question":
        return output("Unknown.", add_open_questions=["what is the budget"])
    return output("Back to the party?")


def test_every_call_is_one_frame_without_earlier_turns(
    app: App, openai_server: OpenAIServer
) -> None:
    openai_server.answer_with = scripted
    rt = runtime(app, openai_server)
    for _, text in TURNS:
        rt.send("s1", UserSaid(text=text, actor=ALICE))
    assert len(openai_server.requests) == 2 * len(TURNS)
    for request in openai_server.requests:
        assert [m["role"] for m in request["messages"]] == ["system", "user"]
        payload = user_payload(request)
        said = payload.pop("user_input")
        state = payload.pop("context_state")
        assert payload == {}
        earlier = [t for _, t in TURNS[: [t for _, t in TURNS].index(said)]]
        outside = request["messages"][0]["content"] + said
        for old in earlier:
            token = old.split(":")[0]
            assert token not in outside  # no earlier turn outside context_state
            # inside it, only the session's topic (its first message) and the refinements
            # asked of the candidate (in people's words) may quote one, never a turn replayed
            quoting = {k: v for k, v in state.items() if k not in ("topic", "refinements")}
            assert token not in json.dumps(quoting)
            if token in json.dumps(state.get("refinements", [])):
                assert old in state["refinements"]
        if kind(request) == "classify" and earlier:
            # the topic, and the turns before as typed features (their acts, writers, what
            # this turn repeats of them), never their words (held above)
            assert state.pop("topic") == TURNS[0][1]
            assert set(state) == {"turn_context"}
            assert set(state["turn_context"]) <= {
                "earlier_turns",
                "replies_to_someone",
                "candidate_on_table",
            }
    last = user_payload(openai_server.requests[-1])["context_state"]
    assert last["open_questions"] == ["what is the budget"]  # carried as state
    # the last call refines again: the earlier refinement travels with the candidate
    assert (
        last["refinements"] == [TURNS[1][1]]
        and user_payload(openai_server.requests[-1])["user_input"] == TURNS[4][1]
    )
    assert last["candidate"].startswith("Rooftop launch party")
    assert len(app.log) == 0


@pytest.mark.parametrize(
    "garbage",
    [
        Reply("Sure! Here is an idea."),
        Reply(json.dumps({"reply": "ok", "context_state_delta": {"set": "stream.state"}})),
        Reply(status=500),
        Reply(json.dumps({"act_type": "commit!!", "target": "x", "confidence": 7})),
        Reply(tool_calls=[tool_call("proposeMutation", "{not json")]),
        Reply(json.dumps({"reply": "ok", "candidate": "   "})),
        Reply(
            json.dumps(
                {
                    "reply": "We decided: the stream ends at 9pm.",
                    "context_state_delta": {"pin_decisions": ["the stream ends at 9pm"]},
                }
            )
        ),
    ],
)
def test_malformed_model_output_falls_back_and_the_turn_goes_on(
    app: App, openai_server: OpenAIServer, garbage: Reply
) -> None:
    openai_server.answer_with = lambda request: garbage
    events = runtime(app, openai_server).send(
        "s1", UserSaid(text="what if we used postgres", actor=ALICE)
    )
    [view] = [e for e in events if isinstance(e, View)]
    assert view.text and view.candidate is not None  # the offline responder put it up
    assert view.candidate.text.strip()
    assert len(app.log) == 0 and pending_proposals(app.redis, app.store.workspace) == []
    session = SessionStore(app.redis, app.store.workspace).load("s1")
    assert session.working.pinned_decisions == []  # only a committed click pins a decision


def apply(rt: Runtime, view: View, who: Any, click_id: str) -> list[OutcomeEvent]:
    button = next(b for b in view.buttons if b.action == ActionType.APPLY_PROPOSAL)
    msg = ActionClicked(
        action=button.action,
        target_id=button.target_id,
        expected_version=button.target_version,
        click_id=click_id,
        actor=who,
    )
    return [e for e in rt.send("s1", msg) if isinstance(e, OutcomeEvent)]


def test_an_agent_proposal_becomes_a_button_a_person_applies(
    app: App, openai_server: OpenAIServer
) -> None:
    openai_server.answer_with = proposing("scene.name", "BRB")
    rt = runtime(app, openai_server)
    [view] = [
        e for e in rt.send("s1", UserSaid(text="let's go brb", actor=ALICE)) if isinstance(e, View)
    ]
    assert app.store.get("scene.name") is None  # proposed, not committed
    [button] = [b for b in view.buttons if b.action == ActionType.APPLY_PROPOSAL]
    assert button.label == "Apply: set scene.name = BRB" and "ProposalPending" in view.fired
    [outcome] = apply(rt, view, ALICE, "k1")
    assert outcome.outcome == "committed"
    entry = app.store.get("scene.name")
    assert entry is not None and entry.value == "BRB" and entry.updated_by == ALICE
    [record] = app.log.latest(1)
    assert record.mutation.proposed_by is not None
    assert record.mutation.proposed_by.kind is ActorKind.AGENT


def test_a_protected_proposal_needs_a_moderator(app: App, openai_server: OpenAIServer) -> None:
    openai_server.answer_with = proposing("stream.state", "off")
    rt = runtime(app, openai_server)
    events = rt.send("s1", UserSaid(text="end the stream", actor=ALICE))
    [view] = [e for e in events if isinstance(e, View)]
    button = next(b for b in view.buttons if b.action == ActionType.APPLY_PROPOSAL)
    assert button.confirm  # protected: adapters ask before acting
    assert [o.reason for o in apply(rt, view, ALICE, "k1")] == ["protected"]
    assert app.store.get("stream.state") is None
    assert [o.outcome for o in apply(rt, view, SAM, "k2")] == ["committed"]


def test_the_models_reads_never_see_a_secret(app: App, openai_server: OpenAIServer) -> None:
    app.gateway.propose(mutation("set", "secret.stream-key", "sk-live-123", "admin:root"))
    app.gateway.propose(mutation("set", "decision.db", "postgres"))

    def answer(request: dict[str, Any]) -> Reply:
        if kind(request) == "classify":
            return label("question")
        if "tool_results" not in user_payload(request)["context_state"]:
            return Reply(
                tool_calls=[
                    tool_call("getState", {"keys": ["secret.stream-key", "decision.db"]}),
                    tool_call("getStatePrefix", {"prefix": ""}),
                ]
            )
        return output("Here is what I found.")

    openai_server.answer_with = answer
    runtime(app, openai_server).send("s1", UserSaid(text="what do we have?", actor=ALICE))
    last = json.dumps(openai_server.requests[-1])
    assert "postgres" in last and "sk-live-123" not in last and 'secret.stream-key": {' not in last


def test_the_trace_shows_each_model_call_with_its_audit(
    app: App, openai_server: OpenAIServer
) -> None:
    openai_server.answer_with = scripted
    events = runtime(app, openai_server).send("s1", UserSaid(text=TURNS[0][1], actor=ALICE))
    [view] = [e for e in events if isinstance(e, View)]
    calls = [s["data"] for s in collect(app, view.correlation_id) if s["event"] == "llm.call"]
    assert [c["purpose"] for c in calls] == ["classify", "generate"]
    for call in calls:
        assert call["outcome"] == "ok" and call["model"] == "test-model"
        assert call["input_hash"] and call["output_hash"] and call["latency_ms"] is not None
        assert call["prompt_tokens"] > 0 and call["input_preview"] == TURNS[0][1][:120]
