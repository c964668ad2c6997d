"""Turning an HTTP failure into a ``ConnectorError`` in the service's own words: the status, the
service's message (or a short excerpt of the body) and whether a later attempt may succeed.
Every message passes through ``redact`` first: a misbehaving proxy or server can echo a
request header back, and a credential must not travel on in an error."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rules.connector_api import ConnectorError

if TYPE_CHECKING:
    import httpx

__all__ = ["excerpt", "redact", "retryable_status", "status_error", "transport_error"]

EXCERPT_CHARS = 200


def redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def excerpt(response: httpx.Response) -> str:
    text = " ".join(response.text.split())
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"


def status_error(
    service: str, response: httpx.Response, detail: str, secrets: Iterable[str] = ()
) -> ConnectorError:
    status = response.status_code
    message = f"{service}: HTTP {status} {detail}".rstrip()
    return ConnectorError(redact(message, secrets), retryable=retryable_status(status))


def transport_error(
    service: str, error: httpx.TransportError, secrets: Iterable[str] = ()
) -> ConnectorError:
    """Timeouts and refused or broken connections: the request may not have arrived, or its
    answer was lost; either way a later attempt may succeed. The URL is left out on purpose
    (a webhook URL can itself be the secret)."""
    import httpx  # loaded by the request that failed (connectors/http_client.py)

    kind = "timed out" if isinstance(error, httpx.TimeoutException) else "connection failed"
    message = f"{service}: {kind} ({type(error).__name__}: {error})"
    return ConnectorError(redact(message, secrets), retryable=True)
