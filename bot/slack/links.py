"""The install link ``deliberate run slack`` prints at start, as someone elsewhere can follow it.

The server listens on ``--host`` (``0.0.0.0`` by default: every interface), which is no address
to share. Where people reach it, in order: ``SLACK_REDIRECT_URI``'s origin (Slack sends the
installer back to this very server there), ``DELIBERATE_WEB_URL`` (the deployment's public
address), the address it listens on when that is one address; else the line says how to make
it known."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from .oauth import INSTALL_PATH

__all__ = ["install_line", "public_base"]

_EVERY_INTERFACE = {"", "0.0.0.0", "::", "[::]"}


def public_base(env: Mapping[str, str], host: str, port: int) -> str | None:
    """``scheme://host[:port]`` of this server as people reach it, or None when not known."""
    for name in ("SLACK_REDIRECT_URI", "DELIBERATE_WEB_URL"):
        parts = urlsplit(env.get(name, "").strip())
        if parts.scheme in ("http", "https") and parts.hostname:
            return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
    if host.strip() in _EVERY_INTERFACE:
        return None
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}"


def install_line(env: Mapping[str, str], host: str, port: int) -> str:
    """What to tell the operator about the install link (a full URL when it is known)."""
    base = public_base(env, host, port)
    if base is not None:
        return f"teams install the app at {base}{INSTALL_PATH}"
    return (
        f"teams install the app at {INSTALL_PATH} on this server's public address (it "
        f"listens on {host or 'every interface'} port {port}); set DELIBERATE_WEB_URL="
        "https://… (or SLACK_REDIRECT_URI) to have the full link printed here"
    )
