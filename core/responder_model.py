"""The model as executor: one frame per turn, the reply validated as ExecutorOutput; any
failure falls back to another responder (the offline one) and is logged, never raised."""

from __future__ import annotations

from pydantic import ValidationError

from core.executor import ExecutorOutput, Responder, Turn, frame_for
from core.llm.chat import ChatModel, ModelCallFailed
from core.llm.replies import first_error, parse_reply

__all__ = ["ModelResponder"]


class ModelResponder:
    name = "model"

    def __init__(self, model: ChatModel, fallback: Responder) -> None:
        self.model = model
        self.fallback = fallback

    def respond(self, turn: Turn) -> ExecutorOutput:
        return self.answer(turn)[0]

    def answer(self, turn: Turn, correlation_id: str | None = None) -> tuple[ExecutorOutput, str]:
        """The output and the name of the responder that produced it."""
        try:
            reply, audit = self.model.complete(
                frame_for(turn),
                purpose="generate",
                schema=ExecutorOutput,
                correlation_id=correlation_id,
            )
        except ModelCallFailed:
            return self.fallback.respond(turn), self.fallback.name
        try:
            output = parse_reply(reply, ExecutorOutput)
        except ValidationError as exc:
            audit.finish("invalid", f"falling back to {self.fallback.name}: {first_error(exc)}")
            return self.fallback.respond(turn), self.fallback.name
        audit.finish("ok")
        return output, self.name
