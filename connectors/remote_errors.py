"""Turning an HTTP failure into a ``ConnectorError`` in the service's own words: the status, the
service's message (or a short excerpt of the body) and whether a later attempt may succeed.
Whatever of an answer a message quotes passes through a ``Redactor`` (``hiding``) *before* it
is cut or its blanks run together: a misbehaving proxy or server can echo a request header or
body back, and neither a credential nor a secret the step sent may travel on in an error, not
even in part."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from core.redaction import Redactor
from rules.connector_api import ActionContext, ConnectorError

if TYPE_CHECKING:
    import httpx

__all__ = [
    "HIDDEN",
    "excerpt",
    "hiding",
    "redact",
    "retryable_status",
    "said",
    "status_error",
    "transport_error",
]

EXCERPT_CHARS = 200
HIDDEN = "***"  # a connector's own credential, wherever an error would quote it


def hiding(ctx: ActionContext | None, credentials: Iterable[str] = ()) -> Redactor:
    """What a connector strikes out of what it quotes: the step's secrets (``ctx``'s) and its
    own ``credentials`` (as ``***``)."""
    own = Redactor([c for c in credentials if c], mask=HIDDEN)
    return own if ctx is None else ctx.redactor | own


def redact(text: str, secrets: Iterable[str]) -> str:
    return hiding(None, secrets).text(text)


def retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def excerpt(response: httpx.Response, hide: Redactor) -> str:
    """The body, the secrets struck out of it first, its blanks run together, cut short."""
    return said(response.text, hide)


def said(text: str, hide: Redactor) -> str:
    """What a service said (its body, or the message its error names), the secrets struck
    out of it first, its blanks run together, cut short."""
    text = " ".join(hide.text(text).split())
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"


def status_error(
    service: str, response: httpx.Response, detail: str, hide: Redactor
) -> ConnectorError:
    status = response.status_code
    message = f"{service}: HTTP {status} {detail}".rstrip()
    return ConnectorError(hide.text(message), retryable=retryable_status(status))


def transport_error(service: str, error: httpx.TransportError, hide: Redactor) -> ConnectorError:
    """Timeouts and refused or broken connections: the request may not have arrived, or its
    answer was lost; either way a later attempt may succeed. The URL is left out on purpose
    (a webhook URL can itself be the secret)."""
    import httpx  # loaded by the request that failed (connectors/http_client.py)

    kind = "timed out" if isinstance(error, httpx.TimeoutException) else "connection failed"
    message = f"{service}: {kind} ({type(error).__name__}: {error})"
    return ConnectorError(hide.text(message), retryable=True)
