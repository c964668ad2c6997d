"""Who is who on Slack, inside one tenant: the roles of a user id, from members
(``slack:U…``) and user groups (``slack:S…`` anywhere; a handle, ``slack:mods``, only in the
team's own section of the config). Group membership is read with the team's token
(``usergroups.list``) and kept for a minute; when Slack cannot tell, nobody gets a group's
role (a moderator's click is refused rather than anyone's allowed). A guest (a user of
another organisation) holds no role."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from bot.chat.people import person
from core.config.roles import Membership, RoleBinding, roles_for
from core.state.actor import Actor

from .turns import PLATFORM

__all__ = ["SlackPeople"]

GROUPS_TTL_SEC = 60.0
log = logging.getLogger("deliberate.slack")


class SlackPeople:
    def __init__(self, bindings: Mapping[str, RoleBinding], client: WebClient) -> None:
        self.bindings = bindings
        self.client = client
        self._uses_groups = any(
            g.startswith(f"{PLATFORM}:") for b in bindings.values() for g in b.groups
        )
        self._lock = threading.Lock()
        self._groups: dict[str, tuple[list[str], list[str]]] = {}  # user -> (ids, handles)
        self._read_at = float("-inf")
        self._reading = False

    def actor(self, user_id: str, *, guest: bool = False, talk_only: bool = False) -> Actor:
        """``guest``: of another organisation; ``talk_only``: the team makes members
        holding no bound role guests."""
        if guest:
            return person(PLATFORM, user_id, (), guest=True)
        ids, handles = self._groups_of(user_id) if self._uses_groups else ((), ())
        who = Membership(PLATFORM, user_id, frozenset(ids), frozenset(handles))
        roles = roles_for(self.bindings, who)
        return person(PLATFORM, user_id, roles, guest=talk_only and not roles)

    def _groups_of(self, user_id: str) -> tuple[list[str], list[str]]:
        """When the groups are old one thread reads them again, and the others go on with
        the old ones meanwhile; only the very first read makes everyone wait."""
        with self._lock:
            if self._read_at == float("-inf"):
                self._groups, self._read_at = self._read_groups(), time.monotonic()
            if self._reading or time.monotonic() - self._read_at <= GROUPS_TTL_SEC:
                return self._groups.get(user_id, ([], []))
            self._reading = True
        groups = self._read_groups()
        with self._lock:
            self._groups, self._read_at, self._reading = groups, time.monotonic(), False
        return groups.get(user_id, ([], []))

    def _read_groups(self) -> dict[str, tuple[list[str], list[str]]]:
        """Each member's groups: ids and handles apart, so a handle shaped like an id is
        never taken for one."""
        try:
            response = self.client.usergroups_list(include_users=True)
        except (SlackApiError, SlackClientError, OSError) as error:
            log.warning("cannot read Slack user groups; group roles are off: %s", error)
            return {}
        members: dict[str, tuple[list[str], list[str]]] = {}
        for group in response.get("usergroups") or []:
            for user in group.get("users") or []:
                ids, handles = members.setdefault(str(user), ([], []))
                ids.append(str(group.get("id")))
                handles.append(str(group.get("handle")))
        return members
