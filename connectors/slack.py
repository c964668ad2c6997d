"""Slack through slack_sdk's WebClient: post a message, optionally in a thread. slack_sdk's own
RateLimitErrorRetryHandler waits out a 429's ``Retry-After`` and tries again once; a 429 past
that is a retryable error.

Env: ``SLACK_BOT_TOKEN``; optional ``SLACK_API_URL`` (default slack_sdk's https://slack.com/api/)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, JsonValue, field_validator

from rules.connector_api import ActionContext, ConnectorAction, ConnectorError

from .env import optional, required
from .remote_errors import redact, retryable_status

if TYPE_CHECKING:
    from slack_sdk import WebClient

__all__ = ["ACTIONS", "code_block", "escape"]

TIMEOUT_SEC = 10
# where chat.postMessage posts: a channel's id (C…, G…, D…), a person's (U…, W…: the app's
# direct message with them), or a channel's name (#general, general: Slack's rules, at most
# 80 lowercase letters, digits, "-", "_" and ".")
CHANNEL = re.compile(r"[CGDUW][A-Z0-9]{2,}|#?[a-z0-9][a-z0-9._\-]{0,79}")
# Slack's own words for "try again later" when they come with a 200 or without a status
RETRYABLE_ERRORS = {
    "ratelimited",
    "internal_error",
    "fatal_error",
    "service_unavailable",
    "request_timeout",
}


def escape(text: str) -> str:
    """People's words as Slack text: its three control characters escaped, so that
    ``<!channel>``, ``<@U…>`` and ``<https://…|label>`` typed by someone stay text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def code_block(text: str) -> str:
    """``text`` escaped, in a code block that no run of backticks in it can end (a zero-width
    space between every two: three of them, wherever they stand, ended it, and what followed
    was read as mrkdwn)."""
    return "```\n" + re.sub("`(?=`)", "`\u200b", escape(text)) + "\n```"


class PostMessageArgs(BaseModel):
    """``unfurl``: Slack previews the links (off unless the rule says so)."""

    model_config = ConfigDict(extra="forbid")
    channel: str
    text: str
    thread_ts: str | None = None
    unfurl: bool = False

    @field_validator("channel")
    @classmethod
    def _channel(cls, channel: str) -> str:
        if not CHANNEL.fullmatch(channel):
            raise ValueError(
                "expected a Slack channel: its id (C…, G…, D…), a person's id (U…) or its "
                "name (#general)"
            )
        return channel


def _client(ctx: ActionContext) -> WebClient:
    # slack_sdk with the first message: reading the config names the action alone
    from slack_sdk import WebClient
    from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler

    token = required(ctx.env, "SLACK_BOT_TOKEN", "slack")
    # slack_sdk joins method names onto the base URL, so it must end with a slash
    base_url = optional(ctx.env, "SLACK_API_URL", WebClient.BASE_URL).rstrip("/") + "/"
    client = WebClient(token=token, base_url=base_url, timeout=TIMEOUT_SEC)
    client.retry_handlers.append(RateLimitErrorRetryHandler())
    return client


def post_message(args: PostMessageArgs, ctx: ActionContext) -> JsonValue:
    client = _client(ctx)
    from slack_sdk.errors import SlackApiError, SlackClientError  # loaded by _client

    secrets = [client.token or ""]
    try:
        response = client.chat_postMessage(
            channel=args.channel,
            text=args.text,
            thread_ts=args.thread_ts,
            unfurl_links=args.unfurl,
            unfurl_media=args.unfurl,
            link_names=False,  # "@here" written as text is text; <!here> is the markup
        )
    except SlackApiError as error:
        code = str(error.response.get("error") or "unknown_error")
        retryable = retryable_status(error.response.status_code) or code in RETRYABLE_ERRORS
        raise ConnectorError(redact(f"slack: {code}", secrets), retryable=retryable) from None
    except SlackClientError as error:  # the request could not be built or sent as asked
        raise ConnectorError(redact(f"slack: {error}", secrets)) from None
    except OSError as error:  # urllib: refused, reset, timed out
        raise ConnectorError(
            redact(f"slack: connection failed ({type(error).__name__}: {error})", secrets),
            retryable=True,
        ) from None
    return {"channel": response.get("channel"), "ts": response.get("ts")}


ACTIONS = (
    ConnectorAction(
        "slack.postMessage",
        PostMessageArgs,
        post_message,
        "Post a message to a Slack channel (in a thread when thread_ts is given); the "
        "values a template puts in its text are escaped, and links are not unfurled.",
        escape=escape,
        shown_to_people=True,
    ),
)
