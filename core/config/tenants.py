"""Tenants: which Discord servers and Slack teams the bot serves, each its own workspace.

A workspace is one tenant's world: its keys, log, sessions, proposals, rules' bookkeeping,
role bindings and rate limits. ``Tenancy`` answers, from the ids a platform payload carries,
which tenant it belongs to, or None when the bot does not serve it; nothing else decides
where an event's reads and writes go.

- A Discord server is a tenant when listed (``tenants.discord.servers``) or when
  ``any_server`` is on: then every server that adds the bot is served, each on its own, with
  no role bindings but ids (a server nobody configured has no names to trust).
- A Discord direct message, when ``direct_messages`` is on, is a private workspace of its
  own (``discord-dm-<user id>``): the person may talk, read and propose, never with a role,
  and no rule runs there.
- A Slack team (``T…``), or an Enterprise Grid org (``E…``) where the org is the unit, is a
  tenant when listed or when ``any_team`` is on (an app installed through OAuth). Slack DMs
  belong to the team they come from.

Rules run only in configured workspaces (listed tenants, and the CLI's own): a server or a
DM nobody configured cannot drive OBS or post to the decisions channel."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, JsonValue, model_validator

from core.config.roles import RoleBinding, is_id, merge_bindings
from core.state.keys import validate_workspace

__all__ = [
    "DiscordServer",
    "DiscordTenants",
    "SlackTeam",
    "SlackTenants",
    "Tenancy",
    "Tenant",
    "TenantsConfig",
    "default_workspace",
]

DERIVED_PREFIXES = ("discord-", "slack-")
_TEAM = re.compile(r"^[TE][A-Z0-9]{2,20}$")


class _Listed(BaseModel):
    """One configured tenant: its id, its workspace (default ``<platform>-<id>``; name an
    existing one to keep the state of a deployment from before tenants), its own role
    bindings (names and permissions count here alone), and whether members who hold no
    bound role may only talk (``members: talk``: they are guests)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    workspace: str | None = None
    roles: dict[str, RoleBinding] = {}
    members: Literal["commit", "talk"] = "commit"
    # the tenant's own sections, merged over the whole config for its workspace alone and
    # validated there (``tenant_layers.py``; ``CoreConfig.for_workspace``)
    policy: dict[str, JsonValue] | None = None
    beats: list[JsonValue] | None = None
    rules: list[JsonValue] | None = None
    actions: dict[str, JsonValue] | None = None
    deliberation: dict[str, JsonValue] | None = None
    perception: dict[str, JsonValue] | None = None

    @model_validator(mode="before")
    @classmethod
    def _bare_id(cls, data: Any) -> Any:
        """An entry may be its id alone; an id YAML read as a number is the same id."""
        if isinstance(data, str | int) and not isinstance(data, bool):
            return {"id": str(data)}
        if isinstance(data, dict) and isinstance(data.get("id"), int):
            return data | {"id": str(data["id"])}
        return data

    @model_validator(mode="after")
    def _workspace_name(self) -> Self:
        if self.workspace is not None:
            validate_workspace(self.workspace)
            derived = self.workspace.startswith(DERIVED_PREFIXES)
            if derived and self.workspace != default_workspace(self):
                raise ValueError(
                    f"workspace {self.workspace!r}: names starting with "
                    f"{' or '.join(DERIVED_PREFIXES)} are those the bot gives servers, teams "
                    "and DMs; choose another"
                )
        return self


class DiscordServer(_Listed):
    @model_validator(mode="after")
    def _guild_id(self) -> Self:
        self.id = str(self.id)
        if not is_id("discord", self.id):
            raise ValueError(f"server id {self.id!r} is not a Discord server id (15-21 digits)")
        return self


class SlackTeam(_Listed):
    @model_validator(mode="after")
    def _team_id(self) -> Self:
        if not _TEAM.match(self.id):
            raise ValueError(
                f"team id {self.id!r} is not a Slack team (T…) or Enterprise Grid org (E…) id"
            )
        return self


class DiscordTenants(BaseModel):
    model_config = ConfigDict(extra="forbid")

    servers: list[DiscordServer] = []
    any_server: bool = False
    direct_messages: bool = False


class SlackTenants(BaseModel):
    model_config = ConfigDict(extra="forbid")

    teams: list[SlackTeam] = []
    any_team: bool = False


class TenantsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    discord: DiscordTenants = DiscordTenants()
    slack: SlackTenants = SlackTenants()


def default_workspace(tenant: _Listed) -> str:
    platform = "discord" if isinstance(tenant, DiscordServer) else "slack"
    return f"{platform}-{tenant.id}"


@dataclass(frozen=True)
class Tenant:
    """Where an event belongs. ``configured``: listed in the config (rules run there);
    ``private``: a direct message's own workspace, where nobody holds a role;
    ``talk_only``: members without a bound role are guests."""

    platform: str
    id: str
    workspace: str
    bindings: Mapping[str, RoleBinding] = field(default_factory=dict)
    configured: bool = False
    private: bool = False
    talk_only: bool = False

    @property
    def is_org(self) -> bool:
        """A Slack Enterprise Grid org, not one team."""
        return self.platform == "slack" and self.id.startswith("E")


class Tenancy:
    """``global_roles``: the config's top-level ``roles:`` (ids only), which hold everywhere
    but in a private DM."""

    def __init__(self, config: TenantsConfig, global_roles: Mapping[str, RoleBinding]) -> None:
        self.config = config
        self.global_roles = dict(global_roles)
        self._servers = {s.id: s for s in config.discord.servers}
        self._teams = {t.id: t for t in config.slack.teams}
        self._implicit: dict[str, SlackTeam] = {}

    def serve_slack_team(
        self, team_id: str, enterprise_id: str | None = None, *, workspace: str | None = None
    ) -> None:
        """The team a single-team bot token belongs to is served, listed or not (a listing
        of it or its org wins), in ``workspace`` (the one such a deployment has always used:
        ``--workspace``)."""
        if team_id not in self._teams and (enterprise_id or "") not in self._teams:
            self._implicit[team_id] = SlackTeam(id=team_id, workspace=workspace)

    def discord_server(self, guild_id: int | str) -> Tenant | None:
        gid = str(guild_id)
        listed = self._servers.get(gid)
        if listed is not None:
            return self._tenant("discord", listed, configured=True)
        if self.config.discord.any_server and is_id("discord", gid):
            return Tenant("discord", gid, f"discord-{gid}", self.global_roles)
        return None

    def discord_dm(self, user_id: int | str) -> Tenant | None:
        if not self.config.discord.direct_messages:
            return None
        uid = str(user_id)
        return Tenant("discord", f"dm-{uid}", f"discord-dm-{uid}", {}, private=True)

    def slack_team(
        self, team_id: str | None, enterprise_id: str | None = None, *, org_install: bool = False
    ) -> Tenant | None:
        """The tenant of a Slack payload: its org when the org is listed or the app was
        installed org-wide, else its team."""
        for candidate in (enterprise_id, team_id):
            listed = self._teams.get(candidate or "") or self._implicit.get(candidate or "")
            if listed is not None:
                return self._tenant("slack", listed, configured=True)
        if not self.config.slack.any_team:
            return None
        unit = enterprise_id if org_install and enterprise_id else team_id
        if not unit or not _TEAM.match(unit):
            return None
        return Tenant("slack", unit, f"slack-{unit}", self.global_roles)

    def configured(self) -> list[Tenant]:
        """Every listed tenant (the workspaces rules run in)."""
        servers = [self._tenant("discord", s, configured=True) for s in self._servers.values()]
        teams = {**self._implicit, **self._teams}.values()
        return servers + [self._tenant("slack", t, configured=True) for t in teams]

    def _tenant(self, platform: str, listed: _Listed, *, configured: bool) -> Tenant:
        return Tenant(
            platform,
            listed.id,
            listed.workspace or default_workspace(listed),
            merge_bindings(self.global_roles, listed.roles),
            configured=configured,
            talk_only=listed.members == "talk",
        )
