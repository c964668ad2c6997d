"""A local webhook receiver: ``POST /hook`` answers 200 ``{"ok": true}``; given a ``secret``, it
recomputes the HMAC-SHA256 of the exact body bytes and answers 401 when the signature header
is missing or differs.

    with WebhookServer(secret="s3cret") as hook:
        args = {"url": hook.hook_url, "hmac_secret_env": "HOOK_SECRET", "json": {...}}
"""

from __future__ import annotations

import hashlib
import hmac

from tests.servers.http import HttpServer, Request, Response

__all__ = ["HOOK", "WebhookServer", "signature"]

HOOK = "/hook"


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class WebhookServer(HttpServer):
    def __init__(
        self, *, secret: str | None = None, signature_header: str = "X-Deliberate-Signature"
    ) -> None:
        super().__init__()
        self.secret, self.signature_header = secret, signature_header
        self.route("POST", HOOK, self._receive)

    @property
    def hook_url(self) -> str:
        return self.url + HOOK

    def _receive(self, request: Request) -> Response:
        if self.secret is not None:
            sent = request.header(self.signature_header) or ""
            if not hmac.compare_digest(sent, signature(self.secret, request.body)):
                return Response(401, {"error": "bad signature"})
        return Response(200, {"ok": True})
