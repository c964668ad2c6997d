"""A chat model behind any OpenAI-compatible endpoint, called only through a PromptFrame.

``OPENAI_API_KEY`` turns it on; ``OPENAI_BASE_URL`` points it at any compatible server;
``DELIBERATE_MODEL`` names the model; ``DELIBERATE_MODEL_TIMEOUT`` bounds a call (seconds)."""

from __future__ import annotations

import os
import time
from typing import Any

import openai
from pydantic import BaseModel

from core.errors import DeliberateError
from core.llm.audit import PREVIEW_CHARS, CallAudit, digest
from core.llm.frame import PromptFrame

__all__ = ["DEFAULT_MODEL", "ChatModel", "ModelCallFailed", "chat_model_from_env"]

DEFAULT_MODEL = "gpt-4o-mini"


class ModelCallFailed(DeliberateError):
    def __init__(self, audit: CallAudit) -> None:
        super().__init__(f"{audit.purpose} call failed: {audit.error}")
        self.audit = audit


class ChatModel:
    def __init__(self, client: openai.OpenAI, model: str, timeout_sec: float = 20.0) -> None:
        self.client = client
        self.model = model
        self.timeout_sec = timeout_sec

    def complete(
        self,
        frame: PromptFrame,
        *,
        purpose: str,
        schema: type[BaseModel] | None = None,
        correlation_id: str | None = None,
    ) -> tuple[str, CallAudit]:
        """The reply text and its audit, still open: the caller closes it as ``ok`` or
        ``invalid`` once it has validated the reply. A failed call raises ModelCallFailed."""
        messages = frame.messages()
        audit = CallAudit(
            purpose, self.model, digest(messages), frame.user_input[:PREVIEW_CHARS], correlation_id
        )
        extra: dict[str, Any] = {}
        if schema is not None:
            extra["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()},
            }
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
            raise ModelCallFailed(audit.finish("error", f"{type(exc).__name__}: {exc}")) from exc
        audit.latency_ms = round((time.perf_counter() - start) * 1000, 1)
        if response.usage is not None:
            audit.prompt_tokens = response.usage.prompt_tokens
            audit.completion_tokens = response.usage.completion_tokens
        content = response.choices[0].message.content if response.choices else None
        if not content:
            raise ModelCallFailed(audit.finish("invalid", "the reply has no text"))
        audit.output_hash = digest(content)
        return content, audit


def chat_model_from_env() -> ChatModel | None:
    """None without ``OPENAI_API_KEY``: then everything runs offline."""
    key = os.environ.get("OPENAI_API_KEY")
    if not key:
        return None
    client = openai.OpenAI(
        api_key=key, base_url=os.environ.get("OPENAI_BASE_URL") or None, max_retries=1
    )
    timeout = float(os.environ.get("DELIBERATE_MODEL_TIMEOUT") or 20)
    return ChatModel(client, os.environ.get("DELIBERATE_MODEL") or DEFAULT_MODEL, timeout)
