"""Installations and bots as the JSON records the store keeps, and which of a team's records
is the latest: pure functions, no Redis.

A team's (or org's) history maps a field to a record:

    installation:<user_id>:<installed_at>   one per installer per install; a token rotation
                                            saves the same installation again, so it rewrites
                                            its own record
    bot:<installed_at>                      one per bot install (a bot token came with it)

Its latest index is derived from the history alone, so no change can leave it stale:

    installation     the newest installation, whoever installed
    user:<user_id>   each installer's newest installation
    bot              the newest bot

Newest is the greatest ``installed_at``, the order slack_sdk's SQL stores read in (ties go to
the greater field). Values round-trip exactly: ``installed_at`` stays a float, expiries stay
Unix seconds, custom values come back."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation

__all__ = [
    "BOT",
    "BOT_PREFIX",
    "INSTALLATION",
    "bot_field",
    "bot_json",
    "installation_field",
    "installation_json",
    "installation_prefix",
    "latest_index",
    "load_bot",
    "load_installation",
    "user_field",
]

INSTALLATION, BOT, _USER = "installation", "bot", "user"
BOT_PREFIX = f"{BOT}:"


def _user(user_id: str | None) -> str:
    return quote(user_id or "", safe="")


def installation_prefix(user_id: str | None = None) -> str:
    """The history fields of every installation, or of one installer's."""
    return f"{INSTALLATION}:" if user_id is None else f"{INSTALLATION}:{_user(user_id)}:"


def installation_field(installation: Installation) -> str:
    return installation_prefix(installation.user_id) + repr(float(installation.installed_at))


def bot_field(bot: Bot) -> str:
    return BOT_PREFIX + repr(float(bot.installed_at))


def user_field(user_id: str) -> str:
    """The latest index's field of one installer's newest installation."""
    return f"{_USER}:{_user(user_id)}"


def latest_index(history: Mapping[str, str]) -> dict[str, str]:
    newest: dict[str, tuple[float, str]] = {}
    for field in history:
        kind, _, rest = field.partition(":")
        if kind == BOT:
            names, stamp = [BOT], rest
        elif kind == INSTALLATION:
            user, _, stamp = rest.rpartition(":")
            names = [INSTALLATION, f"{_USER}:{user}"]
        else:
            continue
        at = float(stamp)
        for name in names:
            if name not in newest or (at, field) > newest[name]:
                newest[name] = (at, field)
    return {name: history[field] for name, (_, field) in newest.items()}


def installation_json(installation: Installation) -> str:
    fields = installation.to_dict_for_copying()
    fields.update(
        bot_scopes=list(installation.bot_scopes or []),
        user_scopes=list(installation.user_scopes or []),
        bot_token_expires_at=installation.bot_token_expires_at,
        user_token_expires_at=installation.user_token_expires_at,
        installed_at=float(installation.installed_at),
    )
    return json.dumps(fields, sort_keys=True)


def bot_json(bot: Bot) -> str:
    fields = bot.to_dict_for_copying()
    fields.update(
        bot_scopes=list(bot.bot_scopes or []),
        bot_token_expires_at=bot.bot_token_expires_at,
        installed_at=float(bot.installed_at),
    )
    return json.dumps(fields, sort_keys=True)


def load_installation(record: str) -> Installation:
    fields: dict[str, Any] = json.loads(record)
    return Installation(**fields)


def load_bot(record: str) -> Bot:
    fields: dict[str, Any] = json.loads(record)
    return Bot(**fields)
