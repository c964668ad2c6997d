"""A small threaded HTTP server for tests that drive real HTTP clients: it records every request
and answers from routes, each a canned ``Response`` or a handler, with a per-route script of
canned responses that go first (a 429 with rate-limit headers, then the route's own answer).

    with HttpServer() as server:
        server.route("POST", "/channels/{channel_id}/messages", handler)
        server.script("POST", "/hook", Response(503, {"error": "down"}))
        ... server.requests[-1].json ...

It listens on 127.0.0.1 with a free port, so another process can reach it through ``url``.
The service-shaped servers (Twitch Helix, Slack, Discord, a webhook receiver) build on it."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

__all__ = ["Handler", "HttpServer", "Request", "Response"]


@dataclass(frozen=True)
class Request:
    """One request as received. ``headers`` has lower-cased names; ``json`` is the parsed body
    (None when it is not JSON); ``params`` are the ``{name}`` parts of the matched route."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    json: Any
    received_at: float
    params: dict[str, str] = field(default_factory=dict)

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def arg(self, name: str) -> str | None:
        """The first value of query parameter ``name``."""
        values = self.query.get(name)
        return values[0] if values else None

    def form(self) -> dict[str, str]:
        """The body as ``application/x-www-form-urlencoded`` fields (first value of each)."""
        fields = parse_qs(self.body.decode("utf-8", "replace"), keep_blank_values=True)
        return {name: values[0] for name, values in fields.items()}


@dataclass(frozen=True)
class Response:
    """``body`` (raw bytes) wins over ``json``; a JSON body gets its Content-Type."""

    status: int = 200
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None

    def with_headers(self, extra: dict[str, str]) -> Response:
        """These headers added, those already set kept."""
        present = {name.lower() for name in self.headers}
        added = {name: value for name, value in extra.items() if name.lower() not in present}
        return Response(self.status, self.json, {**self.headers, **added}, self.body)

    def encoded(self) -> tuple[bytes, dict[str, str]]:
        headers = dict(self.headers)
        if self.body is not None:
            return self.body, headers
        if self.json is None:
            return b"", headers
        headers.setdefault("Content-Type", "application/json")
        return json.dumps(self.json).encode(), headers


Handler = Callable[[Request], Response]


@dataclass
class _Route:
    method: str
    pattern: str
    answer: Handler | Response | None = None
    script: deque[Response] = field(default_factory=deque)

    def match(self, method: str, path: str) -> dict[str, str] | None:
        if method != self.method:
            return None
        want, got = self.pattern.strip("/").split("/"), path.strip("/").split("/")
        if len(want) != len(got):
            return None
        params: dict[str, str] = {}
        for part, value in zip(want, got, strict=True):
            if part.startswith("{") and part.endswith("}"):
                params[part[1:-1]] = value
            elif part != value:
                return None
        return params


class HttpServer:
    def __init__(self, port: int = 0) -> None:
        self._routes: list[_Route] = []
        self._requests: list[Request] = []
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler_class(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> Self:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # --- routes and scripts ------------------------------------------------------------

    def route(self, method: str, pattern: str, answer: Handler | Response) -> None:
        """Answer ``method pattern`` (``{name}`` matches one path segment) with a canned
        response or a handler; a second call for the same route replaces the answer."""
        self._route_for(method, pattern).answer = answer

    def script(self, method: str, pattern: str, *responses: Response) -> None:
        """Answer the next requests to this route with ``responses``, one each, in order;
        after that the route's own answer applies again."""
        with self._lock:
            self._route_for(method, pattern).script.extend(responses)

    def _route_for(self, method: str, pattern: str) -> _Route:
        for route in self._routes:
            if route.method == method.upper() and route.pattern == pattern:
                return route
        route = _Route(method.upper(), pattern)
        self._routes.append(route)
        return route

    def answer(self, request: Request) -> Response:
        """The next scripted response for the request's route, else the route's answer.
        Service-shaped servers override this to add their checks and headers."""
        return self.next_scripted(request) or self.routed(request)

    def next_scripted(self, request: Request) -> Response | None:
        with self._lock:
            route = self._matching(request)
            return route.script.popleft() if route and route.script else None

    def routed(self, request: Request) -> Response:
        route = self._matching(request)
        if route is None or route.answer is None:
            return Response(404, {"error": f"no route for {request.method} {request.path}"})
        answer = route.answer
        return answer if isinstance(answer, Response) else answer(request)

    def _matching(self, request: Request) -> _Route | None:
        return next(
            (r for r in self._routes if r.match(request.method, request.path) is not None), None
        )

    def params_of(self, method: str, path: str) -> dict[str, str]:
        for route in self._routes:
            params = route.match(method, path)
            if params is not None:
                return params
        return {}

    # --- what was received -------------------------------------------------------------

    @property
    def requests(self) -> list[Request]:
        with self._lock:
            return list(self._requests)

    def requests_to(self, method: str, pattern: str) -> list[Request]:
        probe = _Route(method.upper(), pattern)
        return [r for r in self.requests if probe.match(r.method, r.path) is not None]

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[Request]:
        """Block until at least ``count`` requests have arrived (for tests where another
        process makes them); returns them all, or raises TimeoutError."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self._requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{len(self._requests)} of {count} requests arrived")
                self._arrived.wait(left)
            return list(self._requests)

    def wait_until(self, condition: Callable[[], Any], timeout: float = 10.0) -> Any:
        """Poll ``condition`` until it is truthy (for what a client does after answering)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            result = condition()
            if result:
                return result
            time.sleep(0.01)
        raise TimeoutError(f"still false after {timeout}s; requests: {self.requests}")

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()

    def _record(self, request: Request) -> None:
        with self._arrived:
            self._requests.append(request)
            self._arrived.notify_all()


def _handler_class(server: HttpServer) -> type[BaseHTTPRequestHandler]:
    class _RequestHandler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            request = self._read()
            server._record(request)
            try:
                response = server.answer(request)
            except Exception as error:  # a broken handler shows up as a 500, not a hang
                response = Response(500, {"error": f"test server handler: {error!r}"})
            self._write(response)

        def _read(self) -> Request:
            parts = urlsplit(self.path)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                parsed = json.loads(body) if body else None
            except ValueError:
                parsed = None
            return Request(
                method=self.command,
                path=parts.path,
                query=parse_qs(parts.query, keep_blank_values=True),
                headers={name.lower(): value for name, value in self.headers.items()},
                body=body,
                json=parsed,
                received_at=time.time(),
                params=server.params_of(self.command, parts.path),
            )

        def _write(self, response: Response) -> None:
            body, headers = response.encoded()
            self.send_response(response.status)
            for name, value in headers.items():
                self.send_header(name, value)
            if response.status not in (204, 304):
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if body and response.status not in (204, 304):
                self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the recorded requests say what happened; stderr stays quiet

    return _RequestHandler
