"""Where a Slack request comes from: the installation it reached (its team, or its Enterprise
Grid org) and the team of the person acting, which differ in a Slack Connect channel. The
first picks the tenant; the second says whether the person is a guest there.

Bolt reads the installation's ids (``authorizations`` first, so shared channels work) into
its context; the person's team comes from the payload: ``event.user_team`` (else
``event.team``) for events, ``user.team_id`` for clicks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from slack_bolt import BoltContext
from slack_sdk import WebClient

from core.config.tenants import Tenancy, Tenant

__all__ = ["Origin", "origin_of_click", "origin_of_command", "origin_of_event"]


@dataclass(frozen=True)
class Origin:
    team_id: str | None
    enterprise_id: str | None
    org_install: bool
    actor_team: str | None  # the acting person's team, where the payload says
    actor_enterprise: str | None
    client: WebClient  # the installation's token (OAuth) or the bot token
    bot_user_id: str | None = None

    def tenant(self, tenancy: Tenancy) -> Tenant | None:
        return tenancy.slack_team(self.team_id, self.enterprise_id, org_install=self.org_install)

    def is_guest(self, tenant: Tenant) -> bool:
        """A person whose team (or org) is not the tenant's. Unknown counts as home: Slack
        names the person's team wherever it can differ (shared channels)."""
        if tenant.is_org:
            if self.actor_enterprise:
                return self.actor_enterprise != tenant.id
            return bool(self.actor_team) and self.actor_team != self.team_id
        return bool(self.actor_team) and self.actor_team != tenant.id


def _base(context: BoltContext, client: WebClient) -> dict[str, Any]:
    return {
        "team_id": context.team_id,
        "enterprise_id": context.enterprise_id,
        "org_install": bool(context.is_enterprise_install),
        "client": context.client or client,
        "bot_user_id": context.bot_user_id,
    }


def origin_of_event(event: dict[str, Any], context: BoltContext, client: WebClient) -> Origin:
    team = event.get("user_team") or event.get("team")
    actor_team = str(team) if team else None
    enterprise = context.actor_enterprise_id or context.enterprise_id
    return Origin(actor_team=actor_team, actor_enterprise=enterprise, **_base(context, client))


def origin_of_click(body: dict[str, Any], context: BoltContext, client: WebClient) -> Origin:
    user = body.get("user") or {}
    team = user.get("team_id") if isinstance(user, dict) else None
    org = body.get("enterprise")
    enterprise = org.get("id") if isinstance(org, dict) else None
    return Origin(
        actor_team=str(team) if team else None,
        actor_enterprise=enterprise,
        **_base(context, client),
    )


def origin_of_command(context: BoltContext, client: WebClient) -> Origin:
    """A slash command names the team it was typed in, which is the person's own."""
    return Origin(actor_team=None, actor_enterprise=None, **_base(context, client))
