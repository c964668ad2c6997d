"""The web application's settings, from the command line and the environment:

- ``DELIBERATE_WEB_URL``: where people reach it (sign-in redirects come back there). Without
  it, the address a request came to. Serving anything but a loopback address asks for an
  ``https://`` one:
  the session cookie is ``Secure`` then, and a platform's router in front terminates TLS.
- ``DELIBERATE_OPERATOR_TOKEN``: a read-only token for monitoring (at least 16 characters):
  ``Authorization: Bearer TOKEN`` on any page, or pasted on the sign-in page.
- ``DELIBERATE_METRICS_TOKEN``: ``/metrics`` asks for it as a Bearer token; without it,
  ``/metrics`` answers loopback clients only.
- ``DELIBERATE_WEB_SECRET``: the key that signs the cookie; without it one is made once and
  kept in Redis, so every web process (and the next one) shares it.

Sign-in with Slack and Discord has its own settings (``bot.web.signin``)."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["MIN_TOKEN_CHARS", "WebSettings", "WebSettingsError", "is_loopback"]

MIN_TOKEN_CHARS = 16
SESSION_TTL_SEC = 8 * 3600


class WebSettingsError(ValueError):
    """A setting the web application cannot start with; the message names it."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class WebSettings:
    public_url: str | None = None  # None: the address each request came to (loopback only)
    operator_token: str | None = None
    metrics_token: str | None = None
    secret: str | None = None
    session_ttl_sec: int = SESSION_TTL_SEC
    trace_per_minute: int = 60  # Trace pages one person (the operator is one) may open
    state_per_minute: int = 60  # State pages, the same way
    # wrong tokens (the operator's, the metrics') from one address, and at one token from
    # anywhere, in a window: past either, every try is refused until the window passes
    signin_per_address: int = 10
    signin_per_token: int = 100
    signin_window_sec: int = 900

    @property
    def secure_cookies(self) -> bool:
        return (self.public_url or "").startswith("https://")

    @classmethod
    def from_env(cls, host: str, env: Mapping[str, str] | None = None) -> WebSettings:
        env = os.environ if env is None else env
        url = (env.get("DELIBERATE_WEB_URL") or "").strip().rstrip("/")
        parts = urlsplit(url)
        if not url and not is_loopback(host):
            raise WebSettingsError(
                f"serving on {host} needs DELIBERATE_WEB_URL, the https address people use "
                "(sign-in comes back there; cookies travel only over https)"
            )
        if url and (parts.scheme not in ("http", "https") or not parts.netloc):
            raise WebSettingsError(
                f"DELIBERATE_WEB_URL={url!r} is not an http(s) address such as "
                "https://deliberate.example.org"
            )
        if url and parts.scheme != "https" and not is_loopback(host):
            raise WebSettingsError(
                f"serving on {host} needs an https address in DELIBERATE_WEB_URL (got {url!r}): "
                "sign-in cookies travel only over https there; put the platform's TLS router in "
                "front, or serve on 127.0.0.1"
            )
        tokens = {}
        for name in ("DELIBERATE_OPERATOR_TOKEN", "DELIBERATE_METRICS_TOKEN"):
            token = (env.get(name) or "").strip() or None
            if token is not None and len(token) < MIN_TOKEN_CHARS:
                raise WebSettingsError(
                    f"{name} is {len(token)} characters long; use at least {MIN_TOKEN_CHARS} "
                    "(for example: python -c 'import secrets; print(secrets.token_urlsafe())')"
                )
            tokens[name] = token
        return cls(
            public_url=url or None,
            operator_token=tokens["DELIBERATE_OPERATOR_TOKEN"],
            metrics_token=tokens["DELIBERATE_METRICS_TOKEN"],
            secret=(env.get("DELIBERATE_WEB_SECRET") or "").strip() or None,
        )
