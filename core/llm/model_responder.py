"""The model as responder: one stateless frame per call, the reply validated as ExecutorOutput;
any failure falls back to another responder (the offline one) and is logged, never raised.

The model may call tools (``core.llm.tools``). Their results go into the ``context_state``
of a fresh frame for the next call, which is again one system and one user message: a tool
round is never an assistant message replayed."""

from __future__ import annotations

from pydantic import JsonValue, ValidationError

from core.deliberation.turn import Answer, ExecutorOutput, Responder, Turn
from core.llm.chat import ChatModel, ModelCallFailed
from core.llm.frame import PromptFrame
from core.llm.prompts import frame_for
from core.llm.replies import first_error, parse_reply
from core.llm.tools import AgentTools, ToolResult
from core.metrics import Meter
from core.state.actor import Actor

__all__ = ["ModelResponder"]

MAX_TOOL_ROUNDS = 2
MAX_CALLS_PER_ROUND = 5
MAX_RESULT_CHARS = 2000


class ModelResponder:
    name = "model"
    in_process = False  # (a model over the network, whose tools may act)

    def __init__(
        self,
        model: ChatModel,
        fallback: Responder,
        tools: AgentTools | None = None,
        meter: Meter | None = None,
    ) -> None:
        """``meter``: the workspace's, which counts each model call."""
        self.model = model
        self.fallback = fallback
        self.tools = tools
        self.meter = meter

    def respond(self, turn: Turn) -> ExecutorOutput:
        return self.answer(turn).output

    def answer(
        self, turn: Turn, correlation_id: str | None = None, asker: Actor | None = None
    ) -> Answer:
        """``asker``: the person whose turn (or click) this answers; a proposal the model's
        tools make is theirs (four eyes), and never tells the model who they are."""
        frame, results = frame_for(turn), list[ToolResult]()
        for round_ in range(MAX_TOOL_ROUNDS + 1):
            offer = self.tools is not None and round_ < MAX_TOOL_ROUNDS
            try:
                reply, audit = self.model.call(
                    frame,
                    purpose="generate",
                    schema=ExecutorOutput,
                    correlation_id=correlation_id,
                    tools=self.tools.definitions() if offer and self.tools else None,
                    meter=self.meter,
                )
            except ModelCallFailed:
                return self._fallback(turn, results)
            if reply.tool_calls and offer and self.tools is not None:
                audit.finish("ok", f"{len(reply.tool_calls)} tool call(s)")
                for call in reply.tool_calls[:MAX_CALLS_PER_ROUND]:
                    results.append(self.tools.call(call, correlation_id or "-", asker))
                frame = _with_results(frame, results)
                continue
            try:
                output = parse_reply(reply.content or "", ExecutorOutput)
            except ValidationError as exc:
                audit.finish("invalid", f"falling back to {self.fallback.name}: {first_error(exc)}")
                return self._fallback(turn, results)
            audit.finish("ok")
            return _answer(output, self.name, results)
        raise AssertionError("unreachable: the last round offers no tools")

    def _fallback(self, turn: Turn, results: list[ToolResult]) -> Answer:
        return _answer(self.fallback.respond(turn), self.fallback.name, results)


def _answer(output: ExecutorOutput, source: str, results: list[ToolResult]) -> Answer:
    return Answer(
        output,
        source,
        tool_calls=[f"{r.name}: {'ok' if r.ok else 'refused'}" for r in results],
        proposals=[r.proposal for r in results if r.proposal is not None],
    )


def _with_results(frame: PromptFrame, results: list[ToolResult]) -> PromptFrame:
    shown: list[JsonValue] = []
    for result in results:
        text = str(result.for_model())
        shown.append(
            result.for_model()
            if len(text) <= MAX_RESULT_CHARS
            else {"tool": result.name, "ok": result.ok, "result": "(too long to show)"}
        )
    state = dict(frame.context_state) | {"tool_results": shown}
    return frame.model_copy(update={"context_state": state})
