"""Argument types shared by the CLI commands: bad input is a usage error (exit 2) naming
what is wrong, before anything touches Redis."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from core.state.actor import Actor
from core.state.keys import validate_session_id, validate_state_key

__all__ = ["actor", "env_port", "json_or_text", "port", "positive_int", "session_id", "state_key"]


def state_key(text: str) -> str:
    try:
        return validate_state_key(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def session_id(text: str) -> str:
    try:
        return validate_session_id(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def port(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0-65535)")
    return int(text)


def env_port(default: int) -> int:
    """``$PORT`` (a platform sets it), else ``default``; a bad one is named."""
    try:
        return port(os.environ.get("PORT") or str(default))
    except argparse.ArgumentTypeError as exc:
        raise ValueError(f"PORT: {exc}") from None


def positive_int(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def actor(text: str) -> Actor:
    try:
        return Actor.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def json_or_text(text: str) -> Any:
    """JSON when it parses as JSON, else the text itself as a string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
