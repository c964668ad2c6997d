"""A local webhook receiver: ``POST /hook`` answers 200 ``{"ok": true}``; given a ``secret``, it
recomputes the HMAC-SHA256 of the exact body bytes and answers 401 when the signature header
is missing or differs. Given ``echo``, it answers that status with the request's body as its
own (as many a service's 422 quotes what it refused); with ``encoded`` too, the body in base64
instead, standard and URL-safe (``{"refused": ..., "as_url": ...}``, as an API quotes a
payload it refused); with ``shape``, the body as ``shape`` writes it (JSON as Go or PHP
escape it, an HTML page quoting it...).

    with WebhookServer(secret="s3cret") as hook:
        args = {"url": hook.hook_url, "hmac_secret_env": "HOOK_SECRET", "json": {...}}
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable

from tests.servers.http import HttpServer, Request, Response

__all__ = ["HOOK", "WebhookServer", "signature"]

HOOK = "/hook"


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class WebhookServer(HttpServer):
    def __init__(
        self,
        *,
        secret: str | None = None,
        signature_header: str = "X-Deliberate-Signature",
        echo: int | None = None,
        encoded: bool = False,
        shape: Callable[[bytes], bytes] | None = None,
    ) -> None:
        super().__init__()
        self.secret, self.signature_header, self.echo = secret, signature_header, echo
        self.encoded, self.shape = encoded, shape
        self.route("POST", HOOK, self._receive)

    @property
    def hook_url(self) -> str:
        return self.url + HOOK

    def _receive(self, request: Request) -> Response:
        if self.secret is not None:
            sent = request.header(self.signature_header) or ""
            if not hmac.compare_digest(sent, signature(self.secret, request.body)):
                return Response(401, {"error": "bad signature"})
        if self.echo is not None and self.encoded:
            refused = base64.b64encode(request.body).decode()
            as_url = base64.urlsafe_b64encode(request.body).decode()
            return Response(self.echo, {"refused": refused, "as_url": as_url})
        if self.echo is not None and self.shape is not None:
            return Response(self.echo, body=self.shape(request.body))
        if self.echo is not None:
            headers = {"Content-Type": request.header("Content-Type") or "text/plain"}
            return Response(self.echo, headers=headers, body=request.body)
        return Response(200, {"ok": True})
