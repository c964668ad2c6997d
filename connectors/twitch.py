"""Twitch through the Helix API (httpx): create a clip, send a chat announcement, send a chat
message. Requests wait out Helix's rate limit through ``helix_limits``.

Env: ``TWITCH_CLIENT_ID``, ``TWITCH_ACCESS_TOKEN`` (a user token with the scopes the action
needs), ``TWITCH_BROADCASTER_ID``; optional ``TWITCH_MODERATOR_ID`` and ``TWITCH_SENDER_ID``
(both default to the broadcaster), ``TWITCH_API_URL`` (default https://api.twitch.tv/helix)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from connectors.http_client import shared
from core.redaction import Redactor
from rules.connector_api import ActionContext, ConnectorAction, ConnectorError

from .env import optional, required
from .helix_limits import HelixLimits
from .remote_errors import excerpt, hiding, said, status_error, transport_error

if TYPE_CHECKING:
    import httpx

__all__ = ["ACTIONS", "LIMITS"]

DEFAULT_API_URL = "https://api.twitch.tv/helix"
TIMEOUT_SEC = 10.0
LIMITS = HelixLimits()  # one per process: the bucket is shared by every call


@dataclass(frozen=True)
class _Helix:
    api_url: str
    client_id: str
    token: str = field(repr=False)
    broadcaster_id: str
    moderator_id: str
    sender_id: str
    hide: Redactor = field(repr=False)  # (the step's secrets, the token: struck out of errors)

    @classmethod
    def from_env(cls, ctx: ActionContext) -> _Helix:
        env = ctx.env
        broadcaster = required(env, "TWITCH_BROADCASTER_ID", "twitch")
        token = required(env, "TWITCH_ACCESS_TOKEN", "twitch")
        return cls(
            api_url=optional(env, "TWITCH_API_URL", DEFAULT_API_URL).rstrip("/"),
            client_id=required(env, "TWITCH_CLIENT_ID", "twitch"),
            token=token,
            broadcaster_id=broadcaster,
            moderator_id=optional(env, "TWITCH_MODERATOR_ID", broadcaster),
            sender_id=optional(env, "TWITCH_SENDER_ID", broadcaster),
            hide=hiding(ctx, [token]),
        )

    def post(self, path: str, params: dict[str, str], body: Any = None) -> httpx.Response:
        """POST to Helix within its rate limit; a non-2xx answer becomes a ConnectorError."""
        headers = {"Client-Id": self.client_id, "Authorization": f"Bearer {self.token}"}

        import httpx  # with the first request: reading the config names the action alone

        def request() -> httpx.Response:
            try:
                return shared().post(
                    self.api_url + path,
                    params=params,
                    json=body,
                    headers=headers,
                    timeout=TIMEOUT_SEC,
                )
            except httpx.TransportError as error:
                raise transport_error("twitch", error, self.hide) from None

        response = LIMITS.send(f"{self.api_url} {self.client_id}", request)
        if not response.is_success:
            raise status_error("twitch", response, _helix_message(response, self.hide), self.hide)
        return response


def _helix_message(response: httpx.Response, hide: Redactor) -> str:
    """Helix errors are {"error": "Bad Request", "status": 400, "message": "..."}."""
    try:
        body = response.json()
    except ValueError:
        return excerpt(response, hide)
    if isinstance(body, dict) and body.get("message"):
        return said(str(body["message"]), hide)
    return excerpt(response, hide)


def _first(response: httpx.Response, hide: Redactor) -> dict[str, Any]:
    try:
        data = response.json()["data"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ConnectorError(f"twitch: unexpected answer: {excerpt(response, hide)}") from None
    if not isinstance(data, dict):
        raise ConnectorError(f"twitch: unexpected answer: {excerpt(response, hide)}")
    return data


class CreateClipArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    has_delay: bool = False


class AnnouncementArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: str
    color: Literal["blue", "green", "orange", "purple", "primary"] | None = None


class ChatMessageArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: str


def create_clip(args: CreateClipArgs, ctx: ActionContext) -> JsonValue:
    helix = _Helix.from_env(ctx)
    params = {"broadcaster_id": helix.broadcaster_id, "has_delay": str(args.has_delay).lower()}
    clip = _first(helix.post("/clips", params), helix.hide)
    return {"id": clip.get("id"), "edit_url": clip.get("edit_url")}


def send_announcement(args: AnnouncementArgs, ctx: ActionContext) -> JsonValue:
    helix = _Helix.from_env(ctx)
    params = {"broadcaster_id": helix.broadcaster_id, "moderator_id": helix.moderator_id}
    body: dict[str, str] = {"message": args.message}
    if args.color is not None:
        body["color"] = args.color
    helix.post("/chat/announcements", params, body)
    return {"sent": True}


def send_chat_message(args: ChatMessageArgs, ctx: ActionContext) -> JsonValue:
    helix = _Helix.from_env(ctx)
    body = {
        "broadcaster_id": helix.broadcaster_id,
        "sender_id": helix.sender_id,
        "message": args.message,
    }
    sent = _first(helix.post("/chat/messages", {}, body), helix.hide)
    if not sent.get("is_sent"):
        reason = sent.get("drop_reason")
        reason = reason if isinstance(reason, dict) else {}
        raise ConnectorError(
            f"twitch: chat message dropped: {reason.get('message') or 'no reason given'}"
            f" ({reason.get('code') or 'unknown'})"
        )
    return {"message_id": sent.get("message_id"), "is_sent": True}


ACTIONS = (
    ConnectorAction(
        "twitch.createClip",
        CreateClipArgs,
        create_clip,
        "Create a clip of the broadcaster's live stream.",
    ),
    ConnectorAction(
        "twitch.sendAnnouncement",
        AnnouncementArgs,
        send_announcement,
        "Send a highlighted announcement to the broadcaster's chat.",
        shown_to_people=True,
    ),
    ConnectorAction(
        "twitch.sendChatMessage",
        ChatMessageArgs,
        send_chat_message,
        "Send a message to the broadcaster's chat as the sender.",
        shown_to_people=True,
    ),
)
