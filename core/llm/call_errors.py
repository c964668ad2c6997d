"""What a failed model call says about why: the exception's class and message, what lies under
it (openai says only "Connection error." over httpx's "connection refused"), the HTTP status
and where the request went; never the API key, which an endpoint's answer may quote (OpenAI's
401 shows part of it), nor credentials in the URL."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from core.redaction import Redactor

if TYPE_CHECKING:
    import openai

__all__ = ["MAX_CHARS", "failure"]

MAX_CHARS = 400  # an endpoint's error page can be long
HIDDEN = "***"
_KEY_LIKE = re.compile(r"\bsk-[A-Za-z0-9_\-*.]{3,}")  # OpenAI's keys, whole or partly masked


def failure(exc: openai.OpenAIError, api_key: str | None = None) -> str:
    """One line: ``APIConnectionError: Connection error (ConnectError: [Errno 111] Connection
    refused) POST http://127.0.0.1:9/v1/chat/completions``."""
    import openai  # loaded with the client that raised ``exc``

    text = f"{type(exc).__name__}: {str(exc).rstrip('.')}"
    if isinstance(exc, openai.APIStatusError):
        text = f"{type(exc).__name__}: HTTP {exc.status_code}: {_said(exc)}"
    else:
        under = exc.__cause__ or exc.__context__
        if under is not None:
            text += f" ({type(under).__name__}: {under or 'no message'})"
    request = getattr(exc, "request", None)
    if request is not None:
        text += f" {request.method} {_where(request.url)}"
    return " ".join(_hidden(text, api_key).split())[:MAX_CHARS]  # (struck out, then cut)


def _said(exc: openai.APIStatusError) -> str:
    """The endpoint's own message (``{"error": {"message": …}}``), else its body."""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            return str(message)
    return exc.response.text or exc.message


def _where(url: object) -> str:
    """The URL without user, password or query (where some endpoints take a key)."""
    scheme, rest = str(url).split("://", 1) if "://" in str(url) else ("", str(url))
    netloc, slash, path = rest.partition("/")
    shown = f"{netloc.rpartition('@')[2]}{slash}{path.split('?', 1)[0]}"
    return f"{scheme}://{shown}" if scheme else shown


def _hidden(text: str, api_key: str | None) -> str:
    if api_key and len(api_key) >= 4:
        text = Redactor([api_key], mask=HIDDEN).text(text)
    return _KEY_LIKE.sub(f"sk-{HIDDEN}", text)
