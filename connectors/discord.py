"""Discord through its REST API (httpx): send a message to a channel as the bot. The message
carries a nonce derived from the idempotency key with ``enforce_nonce``, so Discord itself
returns the message already created when a retry sends the same step again (within the few
minutes Discord remembers nonces). A 429 waits the ``retry_after`` Discord asks for and tries
again, twice at most.

Env: ``DISCORD_TOKEN`` (the bot token); optional ``DISCORD_API_URL``
(default https://discord.com/api/v10)."""

from __future__ import annotations

import hashlib
import re
import time
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, JsonValue, field_validator

from connectors.http_client import shared
from core.redaction import Redactor
from rules.connector_api import ActionContext, ConnectorAction, ConnectorError

from .discord_markdown import escape
from .env import optional, required
from .remote_errors import excerpt, hiding, said, status_error, transport_error

if TYPE_CHECKING:
    import httpx

__all__ = ["ACTIONS", "escape", "nonce_for"]

DEFAULT_API_URL = "https://discord.com/api/v10"
TIMEOUT_SEC = 10.0
RATE_LIMIT_RETRIES = 2
MAX_RETRY_AFTER_SEC = 10.0  # a longer wait is left to the job's own retry
USER_AGENT = "DiscordBot (https://github.com/deliberate, 0.1.0)"  # the form Discord asks for
NONCE_CHARS = 25  # Discord's limit
SNOWFLAKE = re.compile(r"[0-9]{1,25}")


class SendMessageArgs(BaseModel):
    """``mentions``: whom the message may ping (Discord's ``allowed_mentions.parse``:
    ``users``, ``roles``, ``everyone``); none unless the rule names them."""

    model_config = ConfigDict(extra="forbid")
    channel_id: str  # a snowflake, and nothing that edits the path
    content: str
    mentions: list[Literal["users", "roles", "everyone"]] = []

    @field_validator("channel_id")
    @classmethod
    def _snowflake(cls, channel_id: str) -> str:
        if not SNOWFLAKE.fullmatch(channel_id):
            raise ValueError("expected a Discord channel id (a number, its snowflake)")
        return channel_id


def nonce_for(idempotency_key: str) -> str:
    return hashlib.sha256(idempotency_key.encode()).hexdigest()[:NONCE_CHARS]


def _discord_message(response: httpx.Response, hide: Redactor) -> str:
    """Discord errors are {"message": "Unknown Channel", "code": 10003, ...}."""
    try:
        body = response.json()
    except ValueError:
        return excerpt(response, hide)
    if isinstance(body, dict) and body.get("message"):
        return said(f"{body['message']} (code {body.get('code', 0)})", hide)
    return excerpt(response, hide)


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds Discord asks us to wait, from the body (or the header); None if unusable."""
    try:
        value = response.json().get("retry_after")
    except (ValueError, AttributeError):
        value = response.headers.get("Retry-After")
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _post(url: str, body: dict[str, JsonValue], token: str, hide: Redactor) -> httpx.Response:
    """POST, waiting out up to RATE_LIMIT_RETRIES 429s that ask for a short enough wait."""
    import httpx  # with the first message: reading the config names the action alone

    headers = {"Authorization": f"Bot {token}", "User-Agent": USER_AGENT}
    for attempt in range(RATE_LIMIT_RETRIES + 1):
        try:
            response = shared().post(url, json=body, headers=headers, timeout=TIMEOUT_SEC)
        except httpx.TransportError as error:
            raise transport_error("discord", error, hide) from None
        wait = _retry_after(response) if response.status_code == 429 else None
        if wait is None or wait > MAX_RETRY_AFTER_SEC or attempt == RATE_LIMIT_RETRIES:
            break
        time.sleep(wait)
    return response


def send_message(args: SendMessageArgs, ctx: ActionContext) -> JsonValue:
    token = required(ctx.env, "DISCORD_TOKEN", "discord")
    api_url = optional(ctx.env, "DISCORD_API_URL", DEFAULT_API_URL).rstrip("/")
    body: dict[str, JsonValue] = {
        "content": args.content,
        "allowed_mentions": {"parse": list(dict.fromkeys(args.mentions))},
        "nonce": nonce_for(ctx.idempotency_key),
        "enforce_nonce": True,
    }
    hide = hiding(ctx, [token])
    response = _post(f"{api_url}/channels/{args.channel_id}/messages", body, token, hide)
    if not response.is_success:
        raise status_error("discord", response, _discord_message(response, hide), hide)
    try:
        message_id = response.json().get("id")
    except (ValueError, AttributeError):
        message_id = None
    if not message_id:
        raise ConnectorError(f"discord: unexpected answer: {excerpt(response, hide)}")
    return {"id": str(message_id)}


ACTIONS = (
    ConnectorAction(
        "discord.sendMessage",
        SendMessageArgs,
        send_message,
        "Send a message to a Discord channel as the bot; the values a template puts in it "
        "are escaped, and it pings nobody unless `mentions` says whom.",
        resend_safe=True,
        escape=escape,
        shown_to_people=True,
    ),
)
