"""A direct message from the bot to one person (``SlackCloser.dm``: the requester of a change,
told what became of it). Only a person of the team the token speaks for is written to:
``users.info`` must name a person (not a bot, not deactivated) whose team is the token's own
(on an org-wide install, whose Enterprise Grid org is the token's). Anyone else (a Slack
Connect partner, a user of another team a stored proposal names, an id Slack does not know)
gets nothing, and the debug log says why. Then ``conversations.open`` with the person, and
``chat.postMessage`` there; a refusal (their direct messages closed to apps, a scope the
installation lacks) is one line in the log, with Slack's error."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

__all__ = ["Owner", "member_of", "send_direct"]

log = logging.getLogger("deliberate.slack")
_USER = re.compile(r"^[UW][A-Z0-9]{2,20}$")
SLACKBOT = "USLACKBOT"


@dataclass(frozen=True)
class Owner:
    """Whom a bot token speaks for: its team (None on an org-wide install) and its org."""

    team: str | None
    enterprise: str | None


def member_of(user: dict[str, Any], owner: Owner) -> bool:
    """``users.info``'s user is a person of ``owner``'s team (an org-wide token: of its
    org). An Enterprise Grid user lists the org's teams they belong to."""
    grid = user.get("enterprise_user") or {}
    if owner.team:
        return user.get("team_id") == owner.team or owner.team in (grid.get("teams") or [])
    return bool(owner.enterprise) and grid.get("enterprise_id") == owner.enterprise


def send_direct(client: WebClient, owner: Owner, user_id: str, text: str) -> bool:
    """``text`` (Slack markup, made inert by the caller) to ``user_id`` alone, if they are a
    person of ``owner``'s team; False when not sent."""
    if not _USER.match(user_id) or user_id == SLACKBOT:
        log.debug("slack: no direct message to %r: not a person's id", user_id)
        return False
    try:
        user = client.users_info(user=user_id).get("user") or {}
    except SlackApiError as error:
        cause = error.response.get("error")
        if cause in ("user_not_found", "user_not_visible"):
            log.debug("slack: no direct message to %s: %s", user_id, cause)
        else:
            log.warning("slack: cannot look up %s for a direct message: %s", user_id, cause)
        return False
    except (SlackClientError, OSError) as error:
        log.warning("slack: cannot look up %s for a direct message: %s", user_id, error)
        return False
    if user.get("is_bot") or user.get("is_app_user") or user.get("deleted"):
        log.debug("slack: no direct message to %s: a bot, or deactivated", user_id)
        return False
    if not member_of(user, owner):
        log.debug("slack: no direct message to %s: not of the token's team", user_id)
        return False
    try:
        opened = client.conversations_open(users=user_id)
        channel = str((opened.get("channel") or {}).get("id") or "")
        client.chat_postMessage(channel=channel, text=text, unfurl_links=False, unfurl_media=False)
    except SlackApiError as error:
        cause = error.response.get("error")
        log.warning("slack: cannot send %s a direct message: %s", user_id, cause)
        return False
    except (SlackClientError, OSError) as error:
        log.warning("slack: cannot send %s a direct message: %s", user_id, error)
        return False
    return True
