"""``http.post``: send JSON to a URL (a webhook), with the step's idempotency key in an
``Idempotency-Key`` header and, when asked, an HMAC-SHA256 signature of the exact body bytes.

Env: none of its own; ``hmac_secret_env`` names the variable that holds the signing secret.
Error messages leave the URL out: a webhook URL is often itself the secret."""

from __future__ import annotations

import hashlib
import hmac
import json
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from connectors.http_client import shared
from rules.connector_api import ActionContext, ConnectorAction, ConnectorError

from .env import required
from .remote_errors import excerpt, hiding, status_error, transport_error

__all__ = ["ACTIONS", "sign"]

SERVICE = "http.post"


class PostArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str
    body: JsonValue = Field(default=None, alias="json")
    headers: dict[str, str] = Field(default_factory=dict)
    hmac_secret_env: str | None = None
    signature_header: str = "X-Deliberate-Signature"
    timeout_sec: float = Field(default=10.0, gt=0, le=120)


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _check_url(url: str) -> None:
    if not url.strip():
        raise ConnectorError(f"{SERVICE}: no url")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConnectorError(f"{SERVICE}: the url must be an http(s) URL with a host")


def post(args: PostArgs, ctx: ActionContext) -> JsonValue:
    import httpx  # with the first post: reading the config names the action alone

    _check_url(args.url)
    body = json.dumps(args.body, separators=(",", ":"), ensure_ascii=False).encode()
    headers = httpx.Headers(args.headers)
    headers["Content-Type"] = "application/json"
    headers["Idempotency-Key"] = ctx.idempotency_key
    secrets: list[str] = []
    if args.hmac_secret_env:
        secret = required(ctx.env, args.hmac_secret_env, f"{SERVICE} (hmac_secret_env)")
        secrets.append(secret)
        headers[args.signature_header] = sign(secret, body)
    hide = hiding(ctx, secrets)
    try:
        response = shared().post(args.url, content=body, headers=headers, timeout=args.timeout_sec)
    except httpx.TransportError as error:
        raise transport_error(SERVICE, error, hide) from None
    if not response.is_success:
        raise status_error(SERVICE, response, excerpt(response, hide), hide)
    return {"status": response.status_code}


ACTIONS = (
    ConnectorAction(
        "http.post",
        PostArgs,
        post,
        "POST JSON to a URL, with an Idempotency-Key header and an optional HMAC signature.",
        resend_safe=True,
    ),
)
