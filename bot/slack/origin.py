"""Where a Slack request comes from: the installation it reached (its team, or its Enterprise
Grid org) and the team of the person acting, which differ in a Slack Connect channel. The
first picks the tenant; the second says whether the person is a guest there.

Bolt reads the installation's ids (``authorizations`` first, so shared channels work) into
its context. The person: outside a shared channel (``is_ext_shared_channel`` false) everyone
is of the installation's team; in one, the event names their team (``event.user_team``, else
``event.team``) and Bolt their org where it can tell; a click names their team
(``user.team_id``). Whatever cannot be told in a shared channel counts as a guest: a partner
is never taken for a member. An org tenant's member teams are asked of Slack (``team.info``,
kept ten minutes); a team Slack will not describe is not the org's."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from slack_bolt import BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from core.config.tenants import Tenancy, Tenant

__all__ = [
    "OrgTeams",
    "Origin",
    "origin_of_click",
    "origin_of_command",
    "origin_of_event",
    "user_of",
]

log = logging.getLogger("deliberate.slack")
ORG_TEAMS_TTL_SEC = 600.0


class OrgTeams:
    """Which Enterprise Grid org a team belongs to, as Slack says (``team.info``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[str, tuple[str | None, float]] = {}

    def org_of(self, team_id: str, client: WebClient) -> str | None:
        with self._lock:
            known = self._known.get(team_id)
        if known is not None and time.monotonic() - known[1] < ORG_TEAMS_TTL_SEC:
            return known[0]
        try:
            team = client.team_info(team=team_id).get("team") or {}
            org = team.get("enterprise_id") if isinstance(team, dict) else None
        except (SlackApiError, SlackClientError, OSError) as error:
            log.info("slack: team %s is not one the installation can see: %s", team_id, error)
            org = None
        with self._lock:
            self._known[team_id] = (str(org) if org else None, time.monotonic())
        return str(org) if org else None


@dataclass(frozen=True)
class Origin:
    team_id: str | None
    enterprise_id: str | None
    org_install: bool
    client: WebClient  # the installation's token (OAuth) or the bot token
    bot_user_id: str | None = None
    shared: bool = False  # a Slack Connect channel: people of other organisations in it
    actor_team: str | None = None  # the acting person's team, where the payload says
    actor_enterprise: str | None = None  # their org, where Bolt can tell

    def tenant(self, tenancy: Tenancy) -> Tenant | None:
        return tenancy.slack_team(self.team_id, self.enterprise_id, org_install=self.org_install)

    def is_guest(self, tenant: Tenant, orgs: OrgTeams) -> bool:
        """A person whose team (or org) is not the tenant's; unknown in a shared channel."""
        if not tenant.is_org:
            return self.actor_team != tenant.id if self.actor_team else self.shared
        if self.actor_enterprise:
            return self.actor_enterprise != tenant.id
        if self.actor_team:
            if self.actor_team.startswith("E"):
                return self.actor_team != tenant.id
            return orgs.org_of(self.actor_team, self.client) != tenant.id
        return self.shared


def _base(context: BoltContext, client: WebClient) -> dict[str, Any]:
    return {
        "team_id": context.team_id,
        "enterprise_id": context.enterprise_id,
        "org_install": bool(context.is_enterprise_install),
        "client": context.client or client,
        "bot_user_id": context.bot_user_id,
    }


def origin_of_event(
    body: dict[str, Any], event: dict[str, Any], context: BoltContext, client: WebClient
) -> Origin:
    if body.get("is_ext_shared_channel") is not True:
        return Origin(**_base(context, client))
    team = event.get("user_team") or event.get("team")
    return Origin(
        shared=True,
        actor_team=str(team) if team else None,
        actor_enterprise=context.actor_enterprise_id,  # None when Bolt cannot tell: no fallback
        **_base(context, client),
    )


def origin_of_click(body: dict[str, Any], context: BoltContext, client: WebClient) -> Origin:
    """A click always names the clicker's team; their org is asked of Slack when needed."""
    user = body.get("user") or {}
    team = user.get("team_id") if isinstance(user, dict) else None
    return Origin(actor_team=str(team) if team else None, **_base(context, client))


def origin_of_command(context: BoltContext, client: WebClient) -> Origin:
    """A slash command names the team it was typed in, which is the person's own."""
    return Origin(**_base(context, client))


def user_of(body: dict[str, Any]) -> str | None:
    """The person a payload names as acting: an event's ``user``, a click's or a submitted
    form's ``user.id``, a slash command's ``user_id``."""
    event = body.get("event")
    if isinstance(event, dict):
        user = event.get("user")
        return user if isinstance(user, str) else None
    user = body.get("user")
    if isinstance(user, dict):
        ident = user.get("id")
        return ident if isinstance(ident, str) else None
    ident = body.get("user_id")
    return ident if isinstance(ident, str) else None
