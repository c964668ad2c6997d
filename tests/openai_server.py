"""A local HTTP server that speaks the OpenAI chat-completions protocol, for tests driven by
the real ``openai`` client: it records every request and answers from a script of replies."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str | None = None
    status: int = 200
    delay: float = 0.0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # [{name, arguments}]
    error: str = "scripted failure"  # the error's message, when status is not 200


def tool_call(name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"name": name, "arguments": text}


class OpenAIServer:
    """Answers from ``script`` in order; or, when ``answer_with`` is set, by calling it with
    each request (the request's JSON body)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: list[Reply] = []
        self.answer_with: Callable[[dict[str, Any]], Reply] | None = None
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def reply(
        self,
        content: str | None = None,
        *,
        status: int = 200,
        delay: float = 0.0,
        tool_calls: list[dict[str, Any]] | None = None,
        error: str = "scripted failure",
    ) -> None:
        self.script.append(Reply(content, status, delay, tool_calls or [], error))

    def start(self) -> OpenAIServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _answer(self, request: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        self.requests.append(request)
        if self.answer_with is not None:
            reply = self.answer_with(request)
        else:
            reply = self.script.pop(0) if self.script else Reply(status=500)
        if reply.status != 200:
            error = {"message": reply.error, "type": "server_error", "code": None}
            return reply.status, {"error": error}, reply.delay
        prompt = sum(len(m.get("content") or "") for m in request.get("messages", [])) // 4
        done = len(reply.content or "") // 4
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{n}", "type": "function", "function": call}
                for n, call in enumerate(reply.tool_calls)
            ]
        return (
            200,
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": request.get("model", "unknown"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                        "message": message,
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": done,
                    "total_tokens": prompt + done,
                },
            },
            reply.delay,
        )

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self.send_error(404)
                    return
                length = int(self.headers.get("Content-Length") or 0)
                status, body, delay = server._answer(json.loads(self.rfile.read(length)))
                time.sleep(delay)
                payload = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                # the client may have given up already (the timeout tests)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler
