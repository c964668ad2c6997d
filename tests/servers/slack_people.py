"""Slack's people, as the local Web API (``slack_api.SlackServer.people``) knows them:
``users.info`` answers for any user a test added, with their team and Enterprise Grid org,
as Slack answers for a Slack Connect partner too (so whether a bot writes to someone of
another team is the bot's own check, never the server's refusal); ``conversations.open``
with one person opens (or reopens) their direct message channel, ``D…``, and refuses a bot
(``cannot_dm_bot``) or an id it does not know (``user_not_found``).

    slack.people.add("U0ALICE")                         # of T0TEST
    slack.people.add("U0EVE", team="T0SECOND")
    slack.people.add("U0HELPER", is_bot=True)
    slack.direct("U0ALICE")           # the messages posted in her DM, with their tokens"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from tests.servers.http import Response
from tests.servers.slack_records import BotIdentity, slack_error

__all__ = ["People", "Person"]


@dataclass(frozen=True)
class Person:
    id: str
    team: str = "T0TEST"
    enterprise: str | None = None
    teams: tuple[str, ...] = ()  # an Enterprise Grid user's teams in the org
    is_bot: bool = False
    deleted: bool = False

    def user(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "id": self.id,
            "team_id": self.team,
            "name": self.id.lower(),
            "deleted": self.deleted,
            "is_bot": self.is_bot,
            "is_app_user": False,
        }
        if self.enterprise:
            found["enterprise_user"] = {
                "id": self.id,
                "enterprise_id": self.enterprise,
                "teams": list(self.teams or (self.team,)),
            }
        return found


class People:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.known: dict[str, Person] = {}
        self.channels: dict[str, str] = {}  # a person's DM channel id -> the person

    def add(
        self,
        user_id: str,
        team: str = "T0TEST",
        *,
        enterprise: str | None = None,
        teams: tuple[str, ...] = (),
        is_bot: bool = False,
        deleted: bool = False,
    ) -> None:
        with self._lock:
            self.known[user_id] = Person(user_id, team, enterprise, teams, is_bot, deleted)

    def channel_of(self, user_id: str) -> str:
        return f"D{user_id.removeprefix('U').removeprefix('W')}"

    def holds(self, channel: str) -> bool:
        with self._lock:
            return channel in self.channels

    def info(self, fields: dict[str, Any], bot: BotIdentity) -> Response:
        with self._lock:
            person = self.known.get(str(fields.get("user") or ""))
        if person is None:
            return slack_error("user_not_found")
        return Response(200, {"ok": True, "user": person.user()})

    def open(self, fields: dict[str, Any], bot: BotIdentity) -> Response:
        users = [u for u in str(fields.get("users") or "").split(",") if u]
        if len(users) != 1:
            return slack_error("not_enough_users" if not users else "too_many_users")
        with self._lock:
            person = self.known.get(users[0])
            if person is None:
                return slack_error("user_not_found")
            if person.is_bot:
                return slack_error("cannot_dm_bot")
            channel = self.channel_of(person.id)
            self.channels[channel] = person.id
        return Response(200, {"ok": True, "channel": {"id": channel}})
