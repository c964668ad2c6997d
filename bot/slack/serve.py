"""Receiving Slack's requests: over HTTP (Bolt behind waitress, a production WSGI server, at
``/slack/events``), or in Socket Mode (Bolt's own websocket client, no public URL needed).

Over HTTP anyone can send anything before a signature is checked, so a body is bounded before
it is read: waitress answers 413 to a ``Content-Length`` over ``MAX_BODY_BYTES`` without
reading a byte of it, and to a chunked body as soon as it grows past it (it spools what it
reads to a file past 512 KiB). A body that is not UTF-8 text of one JSON object or form of
the shape Slack sends is a 400: Bolt parses it, and builds the request's context from it,
before it checks the signature, and raises on what it cannot read (``BoltRequest``, its
public request, is built here first, and only a request that could be built is dispatched).

With OAuth, the install link answers 503 (with a page saying so, and ``Retry-After``) while
too many install links are outstanding (``bot.slack.oauth.states``)."""

from __future__ import annotations

from typing import Any

from slack_bolt import App, BoltRequest, BoltResponse
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_bolt.adapter.wsgi.http_request import WsgiHttpRequest
from waitress.server import create_server

from bot.slack.oauth.states import TooManyInstallStates

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
    (a 500 and a traceback in the log for every stranger's garbage), and 503 to an install
    link while too many are outstanding."""

    def dispatch(self, request: WsgiHttpRequest) -> BoltResponse:
        length = int(request.environ.get("CONTENT_LENGTH") or 0)
        raw = request.environ["wsgi.input"].read(min(length, MAX_BODY_BYTES + 1))
        if len(raw) > MAX_BODY_BYTES:  # behind a server that did not bound it
            return _refused(413, "Payload Too Large")
        try:
            body = raw.decode("utf-8")
            parsed = BoltRequest(
                body=body, query=request.query_string, headers=request.get_headers()
            )
        # not UTF-8, not JSON, JSON nested too deep (ValueError, RecursionError); not an
        # object, or one whose fields Bolt reads have another shape (Bolt's context
        # extraction calls .get, len() or "in" on them: AttributeError, TypeError)
        except (ValueError, RecursionError, AttributeError, TypeError):
            return _refused(400, "Bad Request")
        if not isinstance(parsed.body, dict):
            return _refused(400, "Bad Request")
        return self.app.dispatch(parsed)

    def handle_installation(self, request: WsgiHttpRequest) -> BoltResponse:
        try:
            return super().handle_installation(request)
        except TooManyInstallStates as full:  # logged where it was found
            return BoltResponse(
                status=503,
                body=_BUSY_PAGE.format(minutes=max(1, -(-full.retry_after_sec // 60))),
                headers={
                    "content-type": "text/html; charset=utf-8",
                    "retry-after": str(full.retry_after_sec),
                    "cache-control": "no-store",
                },
            )


_BUSY_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Try again shortly</title></head>
<body><h1>Too many installs in progress</h1>
<p>This app has too many install links open right now. Please try again in about
{minutes} minute(s).</p></body></html>
"""


def _refused(status: int, text: str) -> BoltResponse:
    return BoltResponse(status=status, body=text, headers={"content-type": "text/plain"})


def socket_mode(bolt: App, app_token: str) -> SocketModeHandler:
    return SocketModeHandler(bolt, app_token)


def run_socket_mode(handler: SocketModeHandler) -> None:
    """Connect and serve until the process stops (slack-sdk's ``start`` is untyped)."""
    handler.start()  # type: ignore[no-untyped-call]
