"""``http.post``: send JSON to a URL (a webhook), with the step's idempotency key in an
``Idempotency-Key`` header and, when asked, an HMAC-SHA256 signature of the exact body bytes.

Env: none of its own; ``hmac_secret_env`` names the variable that holds the signing secret.
Error messages leave the URL out: a webhook URL is often itself the secret."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

from connectors.http_client import shared
from rules.connector_api import ActionContext, ConnectorAction

from .env import required
from .remote_errors import excerpt, hiding, status_error, transport_error

__all__ = ["ACTIONS", "sign"]

SERVICE = "http.post"
_HOST = re.compile(r"[^\s/?#@\\]+")  # a name or an address: nothing a URL ends a host with


class PostArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str
    body: JsonValue = Field(default=None, alias="json")
    headers: dict[str, str] = Field(default_factory=dict)
    hmac_secret_env: str | None = None
    signature_header: str = "X-Deliberate-Signature"
    timeout_sec: float = Field(default=10.0, gt=0, le=120)

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        """An http(s) URL with a host; said without the URL (it may be the secret)."""
        if not url.strip():
            raise ValueError("is empty: expected an http(s) URL with a host")
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 (a port that is no number raises here)
        except ValueError:
            parts = None
        host = "" if parts is None else parts.hostname or ""
        if parts is None or parts.scheme not in ("http", "https") or not _HOST.fullmatch(host):
            raise ValueError("expected an http(s) URL with a host")
        return url


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def post(args: PostArgs, ctx: ActionContext) -> JsonValue:
    import httpx  # with the first post: reading the config names the action alone

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
