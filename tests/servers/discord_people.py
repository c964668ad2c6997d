"""Discord's people, as the local REST API (``discord_api.DiscordServer.people``) knows them:
``GET /guilds/{guild}/members/{user}`` finds a member a test added to a server (else 404,
Unknown Member, 10007), and ``POST /users/@me/channels`` opens a direct message channel with
any user it knows, a member of any server (Discord lets a bot open one with anyone it shares
a server with: whether the bot writes to a member of another server is the bot's own check).
A person whose direct messages are closed makes a message there fail as Discord does: 403,
Cannot send messages to this user, 50007.

    discord.people.add(GUILD, ALICE)
    discord.people.add(ELSEWHERE, EVE)
    discord.people.add(GUILD, HELPER, bot=True)
    discord.people.close_dms(ALICE)
    discord.direct(ALICE)                 # the messages posted in her DM"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from tests.servers.http import Request, Response

if TYPE_CHECKING:
    from tests.servers.discord_api import DiscordServer

__all__ = ["DM_PREFIX", "People"]

DM_PREFIX = "19"  # a DM channel's id: the prefix, then its person's id without its first two


class People:
    def __init__(self, server: DiscordServer) -> None:
        self.server = server
        self._lock = threading.Lock()
        self.members: dict[str, dict[str, bool]] = {}  # guild -> user id -> is a bot
        self.closed: set[str] = set()
        self.opened: dict[str, str] = {}  # DM channel id -> its person

    def add(self, guild: str, user_id: str, *, bot: bool = False) -> None:
        with self._lock:
            self.members.setdefault(guild, {})[user_id] = bot

    def close_dms(self, user_id: str) -> None:
        with self._lock:
            self.closed.add(user_id)

    def channel_of(self, user_id: str) -> str:
        return DM_PREFIX + user_id[2:]

    def refuses(self, channel_id: str) -> Response | None:
        """A message to a DM whose person takes none: Discord's 50007."""
        with self._lock:
            person = self.opened.get(channel_id)
            closed = person is not None and person in self.closed
        if not closed:
            return None
        return Response(403, {"message": "Cannot send messages to this user", "code": 50007})

    def holds(self, channel_id: str) -> bool:
        with self._lock:
            return channel_id in self.opened

    def member(self, request: Request) -> Response:
        guild, user_id = request.params["guild_id"], request.params["user_id"]
        with self._lock:
            bot = self.members.get(guild, {}).get(user_id)
        if bot is None:
            return Response(404, {"message": "Unknown Member", "code": 10007})
        user = {"id": user_id, "username": f"u{user_id[-4:]}", "discriminator": "0", "bot": bot}
        return Response(200, {"user": user, "roles": [], "joined_at": "2024-01-01T00:00:00Z"})

    def open(self, request: Request) -> Response:
        body: dict[str, Any] = request.json if isinstance(request.json, dict) else {}
        user_id = str(body.get("recipient_id") or "")
        with self._lock:
            known = any(user_id in members for members in self.members.values())
            if not known:
                return Response(400, {"message": "Invalid Recipient(s)", "code": 50033})
            channel = self.channel_of(user_id)
            self.opened[channel] = user_id
        recipient = {"id": user_id, "username": f"u{user_id[-4:]}", "discriminator": "0"}
        return Response(200, {"id": channel, "type": 1, "recipients": [recipient]})
