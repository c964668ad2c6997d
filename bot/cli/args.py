"""Argument types shared by the CLI commands: bad input is a usage error (exit 2) naming
what is wrong, before anything touches Redis."""

from __future__ import annotations

import argparse
import json
from typing import Any

from core.state.actor import Actor
from core.state.keys import validate_session_id, validate_state_key

__all__ = ["actor", "json_or_text", "positive_int", "session_id", "state_key"]


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
