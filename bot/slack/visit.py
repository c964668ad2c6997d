"""One Slack request, resolved once (``Visit``): where it came from (``origin.py``), the
tenant's side of the adapter it reaches (``Team``; None for a team the bot does not serve)
and the person acting. The Bolt app's middleware makes it for every request before any
listener runs and keeps it in the request's context, as Bolt keeps its own (``bolt.py``);
the adapter's handlers take it from there and never work the tenant or the actor out again.
The person is the one the payload names (``origin.user_of``), not Bolt's ``context.user_id``,
which an installation with a user token would make the installer.

What it costs is paid by the first handler that asks, in the listener pool and not in the
thread that must acknowledge within Slack's three seconds: a team's workspace may be opened
for the first time, and a person of an Enterprise Grid org may need a ``team.info``."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from bot.proposals.refs import Install
from core.recently_used import Recent
from core.state.actor import Actor

from .origin import OrgTeams, Origin
from .roles import SlackPeople
from .team import Team

if TYPE_CHECKING:
    from slack_sdk import WebClient

    from bot.chat.workspaces import Workspaces

__all__ = ["Visit", "Visits"]

log = logging.getLogger("deliberate.slack")


class Visits:
    """What lasts between requests: the workspaces, each tenant's people (their groups are
    kept a minute) and which org a team belongs to (ten minutes)."""

    def __init__(self, workspaces: Workspaces) -> None:
        self.workspaces = workspaces
        self.people: Recent[SlackPeople] = Recent()
        self.orgs = OrgTeams()

    def of(self, origin: Origin, user: str | None) -> Visit:
        return Visit(self, origin, user or "")


class Visit:
    """Its team and actor are worked out on first use and kept. Not with
    ``functools.cached_property``: on Python 3.11 that holds one lock for every instance,
    so every request's first use would wait behind any other's (a ``usergroups.list``, a
    ``team.info``). One request's handlers use it one after the other, never at once."""

    def __init__(self, visits: Visits, origin: Origin, user: str) -> None:
        self._visits = visits
        self.origin = origin
        self.user = user  # the acting person's user id ("" when the request names nobody)
        self._team: Team | None = None
        self._resolved = False
        self._actor: Actor | None = None

    @property
    def client(self) -> WebClient:
        """The installation's Web API client (its token), served or not."""
        return self.origin.client

    @property
    def team(self) -> Team | None:
        """The tenant's side of the adapter; None for a team the bot does not serve."""
        if not self._resolved:
            self._team, self._resolved = self._find_team(), True
        return self._team

    def _find_team(self) -> Team | None:
        origin, visits = self.origin, self._visits
        tenant = origin.tenant(visits.workspaces.tenancy)
        if tenant is None:
            log.info("slack: team %s (org %s) is not served", origin.team_id, origin.enterprise_id)
            return None
        people = visits.people.get(tenant.workspace)
        if people is None:
            made = SlackPeople(tenant.bindings, origin.client)
            people = visits.people.put(tenant.workspace, made)
        people.client = origin.client  # the installation's current token (it may rotate)
        app, runtime = visits.workspaces.app(tenant), visits.workspaces.runtime(tenant)
        install = Install(origin.team_id, origin.enterprise_id, origin.org_install)
        return Team(tenant, app, runtime, origin.client, people, install)

    @property
    def actor(self) -> Actor:
        """The person acting, with their roles in the tenant (a guest in another org's
        channel). Only asked of a request the bot serves."""
        if self._actor is None:
            team = self.team
            if team is None:
                raise LookupError("no actor: the bot does not serve this team")
            guest = self.origin.is_guest(team.tenant, self._visits.orgs)
            talk_only = team.tenant.talk_only
            self._actor = team.people.actor(self.user, guest=guest, talk_only=talk_only)
        return self._actor
