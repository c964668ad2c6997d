"""A chat model behind any OpenAI-compatible endpoint, called only through a PromptFrame.

``OPENAI_API_KEY`` turns it on; ``OPENAI_BASE_URL`` points it at any compatible server;
``DELIBERATE_MODEL`` names the model; ``DELIBERATE_MODEL_TIMEOUT`` bounds a call (seconds)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from core.errors import DeliberateError
from core.llm.call_audit import PREVIEW_CHARS, CallAudit, digest
from core.llm.call_errors import failure
from core.llm.frame import PromptFrame
from core.llm.replies import ModelReply, ToolCall
from core.metrics import Meter

if TYPE_CHECKING:
    import openai

__all__ = [
    "DEFAULT_MODEL",
    "ChatModel",
    "ModelCallFailed",
    "chat_model_from_env",
]

DEFAULT_MODEL = "gpt-4o-mini"


class ModelCallFailed(DeliberateError):
    def __init__(self, audit: CallAudit) -> None:
        super().__init__(f"{audit.purpose} call failed: {audit.error}")
        self.audit = audit


class ChatModel:
    def __init__(
        self,
        client: openai.OpenAI,
        model: str,
        timeout_sec: float = 20.0,
        sink: Callable[[CallAudit], None] | None = None,
    ) -> None:
        self.client = client
        self.model = model
        self.timeout_sec = timeout_sec
        self.sink = sink  # also receives every audit once it is finished (for traces)

    def complete(
        self,
        frame: PromptFrame,
        *,
        purpose: str,
        schema: type[BaseModel] | None = None,
        correlation_id: str | None = None,
        meter: Meter | None = None,
    ) -> tuple[str, CallAudit]:
        """The reply text and its audit, still open: the caller closes it as ``ok`` or
        ``invalid`` once it has validated the reply. A failed call raises ModelCallFailed."""
        reply, audit = self.call(
            frame, purpose=purpose, schema=schema, correlation_id=correlation_id, meter=meter
        )
        if not reply.content:
            raise ModelCallFailed(audit.finish("invalid", "the reply has no text"))
        return reply.content, audit

    def call(
        self,
        frame: PromptFrame,
        *,
        purpose: str,
        schema: type[BaseModel] | None = None,
        correlation_id: str | None = None,
        tools: list[dict[str, Any]] | None = None,
        meter: Meter | None = None,
    ) -> tuple[ModelReply, CallAudit]:
        """One stateless call: the frame's two messages, and the tools the model may call.
        ``meter``: the workspace's, which counts the call once its audit is finished (the
        model may serve several workspaces)."""
        messages = frame.messages()
        audit = CallAudit(
            purpose, self.model, digest(messages), frame.user_input[:PREVIEW_CHARS], correlation_id
        )
        audit.sink, audit.meter = self.sink, meter
        extra: dict[str, Any] = {}
        if schema is not None:
            extra["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()},
            }
        if tools:
            extra["tools"] = tools
        import openai  # loaded with the client this model was given

        start = time.perf_counter()
        try:
            response = self.client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                timeout=self.timeout_sec,
                **extra,
            )
        except openai.OpenAIError as exc:
            audit.latency_ms = round((time.perf_counter() - start) * 1000, 1)
            cause = failure(exc, self.client.api_key)
            raise ModelCallFailed(audit.finish("error", cause)) from exc
        audit.latency_ms = round((time.perf_counter() - start) * 1000, 1)
        if response.usage is not None:
            audit.prompt_tokens = response.usage.prompt_tokens
            audit.completion_tokens = response.usage.completion_tokens
        if not response.choices:
            raise ModelCallFailed(audit.finish("invalid", "the reply has no choices"))
        message = response.choices[0].message
        calls = [
            ToolCall(c.id, c.function.name, c.function.arguments or "")
            for c in message.tool_calls or []
            if c.type == "function"
        ]
        audit.output_hash = digest(
            [message.content, [(c.name, c.arguments) for c in calls]] if calls else message.content
        )
        return ModelReply(message.content, calls), audit


def chat_model_from_env() -> ChatModel | None:
    """None without ``OPENAI_API_KEY``: then everything runs offline."""
    key = os.environ.get("OPENAI_API_KEY")
    if not key:
        return None
    import openai  # ~0.3 s of CPU: a command that runs offline (no key) never pays for it

    client = openai.OpenAI(
        api_key=key, base_url=os.environ.get("OPENAI_BASE_URL") or None, max_retries=1
    )
    timeout = float(os.environ.get("DELIBERATE_MODEL_TIMEOUT") or 20)
    return ChatModel(client, os.environ.get("DELIBERATE_MODEL") or DEFAULT_MODEL, timeout)
