"""Receiving Slack's requests: over HTTP (Bolt behind waitress, a production WSGI server, at
``/slack/events``), or in Socket Mode (Bolt's own websocket client, no public URL needed)."""

from __future__ import annotations

from typing import Any

from slack_bolt import App
from slack_bolt.adapter.socket_mode import SocketModeHandler
from slack_bolt.adapter.wsgi import SlackRequestHandler
from waitress.server import create_server

__all__ = ["EVENTS_PATH", "http_server", "run_socket_mode", "socket_mode"]

EVENTS_PATH = "/slack/events"  # events, interactivity and the slash command all come here


def http_server(bolt: App, host: str, port: int, threads: int = 8) -> Any:
    """A waitress server (not yet serving: call ``run()``; ``effective_port`` is its port,
    which the stubs do not declare, hence ``Any``)."""
    handler = SlackRequestHandler(bolt, path=EVENTS_PATH)
    return create_server(handler, host=host, port=port, threads=threads, ident=None)


def socket_mode(bolt: App, app_token: str) -> SocketModeHandler:
    return SocketModeHandler(bolt, app_token)


def run_socket_mode(handler: SocketModeHandler) -> None:
    """Connect and serve until the process stops (slack-sdk's ``start`` is untyped)."""
    handler.start()  # type: ignore[no-untyped-call]
