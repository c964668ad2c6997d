"""The links ``deliberate run slack`` prints at start (the app's Request URL, the install
link), as someone elsewhere can follow them.

The server listens on ``--host`` (``0.0.0.0`` by default: every interface), which is no address
to share. Where people reach it, in order: ``SLACK_REDIRECT_URI``'s origin (Slack sends the
installer back to this very server there), ``DELIBERATE_WEB_URL`` (the deployment's public
address), the address it listens on when that is one address; else the line says how to make
it known."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from .oauth import INSTALL_PATH
from .serve import EVENTS_PATH

__all__ = ["events_line", "install_line", "public_base"]

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


def events_line(env: Mapping[str, str], host: str, port: int) -> str:
    """Where Slack's requests go: the app's Request URL when it is known, and where this
    server listens when that is another address."""
    base = public_base(env, host, port)
    listening = "every interface" if host.strip() in _EVERY_INTERFACE else host
    if base is None:
        return (
            f"Slack requests go to {EVENTS_PATH} on this server's public address (it listens "
            f"on {listening} port {port}); set DELIBERATE_WEB_URL=https://… to have the app's "
            "Request URL printed here"
        )
    if base == public_base({}, host, port):
        return f"Slack requests go to {base}{EVENTS_PATH}"
    return f"Slack requests go to {base}{EVENTS_PATH} (it listens on {listening} port {port})"
