"""The Bolt app: Slack's request verification, retries and acknowledgements are Bolt's; each
listener hands its payload to the adapter. Clicks and commands are acknowledged at once, and
Bolt runs the rest of a listener after answering Slack (``process_before_response`` off)."""

from __future__ import annotations

import logging
from concurrent.futures import Executor
from typing import Any

from slack_bolt import Ack, App, BoltContext, Respond

from .adapter import SlackAdapter
from .buttons import ACTION_ID
from .settings import SlackSettings

__all__ = ["COMMAND", "EVENTS", "build_bolt_app"]

COMMAND = "/deliberate"
EVENTS = ("app_mention", "message")  # what the listeners below take; the manifest subscribes


def build_bolt_app(
    adapter: SlackAdapter, settings: SlackSettings, *, executor: Executor | None = None
) -> App:
    """``adapter.client`` must be ``settings.web_client()``'s: Bolt checks its token with
    ``auth.test`` now, and the listeners post with it."""
    bolt = App(
        client=adapter.client,
        signing_secret=settings.signing_secret,
        # Socket Mode requests come over the app's own websocket, unsigned
        request_verification_enabled=not settings.socket_mode,
        listener_executor=executor,
        logger=logging.getLogger("deliberate.slack.bolt"),
    )

    @bolt.event("app_mention")
    def _mention(event: dict[str, Any], context: BoltContext) -> None:
        adapter.on_event(event, context.bot_user_id, mention=True)

    @bolt.event("message")
    def _message(event: dict[str, Any], context: BoltContext) -> None:
        adapter.on_event(event, context.bot_user_id, mention=False)

    @bolt.action(ACTION_ID)
    def _click(ack: Ack, body: dict[str, Any]) -> None:
        ack()
        adapter.on_click(body)

    @bolt.command(COMMAND)
    def _command(ack: Ack, respond: Respond, command: dict[str, Any]) -> None:
        ack()  # at once: `why` may read far back in the log, and Slack waits 3 seconds
        respond(text=adapter.on_command(str(command.get("text") or "")), response_type="ephemeral")

    return bolt
