"""Receiving Slack's requests: over HTTP (Bolt behind waitress, a production WSGI server, at
``/slack/events``), or in Socket Mode (Bolt's own websocket client, no public URL needed).

Over HTTP anyone can send anything before a signature is checked, so a body is bounded before
it is read: waitress answers 413 to a ``Content-Length`` over ``MAX_BODY_BYTES`` without
reading a byte of it, and to a chunked body as soon as it grows past it (it spools what it
reads to a file past 512 KiB). A body that is not UTF-8 text of one JSON object or form is a
400, answered before Bolt parses it (Bolt parses before it checks the signature, and would
raise)."""

from __future__ import annotations

from typing import Any

from slack_bolt import App, BoltRequest, BoltResponse
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.adapter.wsgi.http_request import WsgiHttpRequest
from slack_bolt.request.internals import (
    build_normalized_headers,
    extract_content_type,
    parse_body,
)
from waitress.server import create_server

__all__ = ["EVENTS_PATH", "MAX_BODY_BYTES", "http_server", "run_socket_mode", "socket_mode"]

EVENTS_PATH = "/slack/events"  # events, interactivity and the slash command all come here
MAX_BODY_BYTES = 1024 * 1024  # Slack's own payloads are far smaller (a message: 40,000 chars)


def http_server(bolt: App, host: str, port: int, threads: int = 8) -> Any:
    """A waitress server (not yet serving: call ``run()``; ``effective_port`` is its port,
    which the stubs do not declare, hence ``Any``)."""
    handler = _CheckedBodies(bolt, path=EVENTS_PATH)
    # waitress refuses a body of max_request_body_size bytes or more
    limit = MAX_BODY_BYTES + 1
    return create_server(
        handler, host=host, port=port, threads=threads, ident=None, max_request_body_size=limit
    )


class _CheckedBodies(SlackRequestHandler):
    """Bolt's WSGI handler, answering 400 to a body Bolt could not parse instead of raising
    (a 500 and a traceback in the log for every stranger's garbage)."""

    def dispatch(self, request: WsgiHttpRequest) -> BoltResponse:
        length = int(request.environ.get("CONTENT_LENGTH") or 0)
        raw = request.environ["wsgi.input"].read(min(length, MAX_BODY_BYTES + 1))
        if len(raw) > MAX_BODY_BYTES:  # behind a server that did not bound it
            return _refused(413, "Payload Too Large")
        try:
            body = raw.decode("utf-8")
            headers = request.get_headers()
            content_type = extract_content_type(build_normalized_headers(headers))
            if not isinstance(parse_body(body, content_type), dict):
                return _refused(400, "Bad Request")
        except (ValueError, RecursionError):  # not UTF-8, not JSON, or JSON nested too deep
            return _refused(400, "Bad Request")
        query = request.query_string
        return self.app.dispatch(BoltRequest(body=body, query=query, headers=headers))


def _refused(status: int, text: str) -> BoltResponse:
    return BoltResponse(status=status, body=text, headers={"content-type": "text/plain"})


def socket_mode(bolt: App, app_token: str) -> SocketModeHandler:
    return SocketModeHandler(bolt, app_token)


def run_socket_mode(handler: SocketModeHandler) -> None:
    """Connect and serve until the process stops (slack-sdk's ``start`` is untyped)."""
    handler.start()  # type: ignore[no-untyped-call]
