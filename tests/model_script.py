"""What a scripted model answers in tests: which call a request is (classify or generate),
what it carried, a label, an output, and a model that proposes a mutation through its tool."""

from __future__ import annotations

import json
from typing import Any

from tests.openai_server import Reply, tool_call


def kind(request: dict[str, Any]) -> str:
    return (
        "classify" if "You label one chat turn" in request["messages"][0]["content"] else "generate"
    )


def user_payload(request: dict[str, Any]) -> dict[str, Any]:
    return json.loads(request["messages"][1]["content"])


def label(act: str) -> Reply:
    return Reply(json.dumps({"act_type": act, "target": "current_candidate", "confidence": 0.9}))


def output(reply: str, candidate: str | None = None, **delta: Any) -> Reply:
    body = {"reply": reply, "candidate": candidate, "context_state_delta": delta}
    return Reply(json.dumps(body))


def proposing(key: str, value: Any) -> Any:
    def answer(request: dict[str, Any]) -> Reply:
        if kind(request) == "classify":
            return label("brainstorm")
        if "tool_results" not in user_payload(request)["context_state"]:
            args = {"op": "set", "key": key, "value": value, "reason": "the group asked"}
            return Reply(tool_calls=[tool_call("proposeMutation", args)])
        return output("I proposed it; someone with the right role can apply it.")

    return answer
