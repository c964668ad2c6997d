"""Argument types shared by the CLI commands: bad input is a usage error (exit 2) naming
what is wrong, before anything touches Redis."""

from __future__ import annotations

import argparse
import json
from typing import Any

from core.actor import Actor
from core.keys import validate_state_key

__all__ = ["actor", "json_or_text", "state_key"]


def state_key(text: str) -> str:
    try:
        return validate_state_key(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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
