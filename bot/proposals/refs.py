"""Each pending proposal's chat messages: where the adapters posted its buttons (platform,
channel, message, thread) and what the message said, so that it can be closed without a
click. A hash per proposal (a field per message), kept as long as the proposal is, and an
index of proposal ids scored by their deadline: the worker's sweep reads those past it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from core.deliberation.actions import PROPOSAL_ACTIONS
from core.deliberation.view import View
from core.state.keys import WorkspaceKeys
from core.state.scripts import server_ms

if TYPE_CHECKING:
    from bot.app import App
    from core.gateway.proposals import ProposalBox
    from core.redis.client import RedisClient

__all__ = ["MAX_MESSAGES", "Install", "Shown", "ShownMessages", "keep_shown", "proposals_in"]

NAME = "shown"  # the adapter keys' name (``{ws:<id>}:adapter:chat:shown…``)
MAX_MESSAGES = 50  # a proposal's messages kept at most (each turn may show it again)
TOLD = "told:"  # a proposal's hash field: a change its requester was told of


@dataclass(frozen=True)
class Install:
    """Where a message was posted from, as the platform's token is found for it again: on
    Slack the installation (its team, its Enterprise Grid org, whether the app was installed
    org-wide: the ids Bolt finds a request's token by); on Discord the server (``team``;
    None in a direct message)."""

    team: str | None = None
    enterprise: str | None = None
    org_install: bool = False


class Shown(BaseModel):
    """One message showing a proposal: ``message`` is Slack's ``ts`` or Discord's message
    id, ``thread`` Slack's ``thread_ts`` (Discord: the channel is the thread); ``text`` what
    it says (Slack's fallback text, Discord's content) and ``blocks`` Slack's blocks;
    ``team``, ``enterprise`` and ``org_install`` where it was posted from (``Install``;
    unknown on a message kept by an older release)."""

    model_config = ConfigDict(frozen=True)

    platform: str
    channel: str
    message: str
    thread: str | None = None
    text: str = ""
    blocks: list[dict[str, Any]] = []
    team: str | None = None
    enterprise: str | None = None
    org_install: bool = False

    @property
    def install(self) -> Install:
        return Install(self.team, self.enterprise, self.org_install)

    @property
    def field(self) -> str:
        return f"{self.platform}:{self.channel}:{self.message}"

    @property
    def ref(self) -> str:
        """The message as ``ClickLines`` names it (its click lines, its lock)."""
        return f"{self.channel}:{self.message}"


def proposals_in(view: View) -> list[str]:
    """The ids of the proposals whose buttons ``view`` carries."""
    found = (b.target_id for b in view.buttons if b.action in PROPOSAL_ACTIONS)
    return list(dict.fromkeys(found))


def keep_shown(app: App, proposal_ids: list[str], shown: Shown) -> int:
    """What an adapter does once it has posted ``shown``: keep it for each of the pending
    proposals it shows (``ShownMessages.record``), so that it closes when they expire."""
    if not proposal_ids:
        return 0
    return ShownMessages.in_workspace(app).record(app.gateway.proposals, proposal_ids, shown)


class ShownMessages:
    def __init__(self, client: RedisClient, workspace: str) -> None:
        self.redis = client
        self.keys = WorkspaceKeys(workspace)

    @classmethod
    def in_workspace(cls, app: App) -> ShownMessages:
        return cls(app.redis, app.store.workspace)

    @property
    def index(self) -> str:
        return self.keys.adapter("chat", NAME)

    def key(self, proposal_id: str) -> str:
        return self.keys.adapter("chat", f"{NAME}:{proposal_id}")

    def record(self, proposals: ProposalBox, ids: Iterable[str], shown: Shown) -> int:
        """Keep ``shown`` for each pending proposal of ``ids``, as long as the proposal is
        kept (a message updated again replaces what it said), up to ``MAX_MESSAGES`` a
        proposal; how many."""
        kept = 0
        for proposal_id in ids:
            proposal = proposals.get(proposal_id)
            ttl = int(self.redis.pttl(proposals.keys.proposal(proposal_id)))
            if proposal is None or ttl <= 0:
                continue  # gone, or (an older release's) kept for ever: the sweep gives one
            key = self.key(proposal_id)
            full = int(self.redis.hlen(key)) >= MAX_MESSAGES
            if full and not self.redis.hexists(key, shown.field):
                continue  # the first ones are kept: the thread's last message shows it too
            pipe = self.redis.pipeline(transaction=True)  # (a cluster client defaults to False)
            pipe.hset(key, shown.field, shown.model_dump_json())
            pipe.pexpire(key, ttl)
            pipe.zadd(self.index, {proposal_id: proposals.deadline(proposal)})
            pipe.execute()
            kept += 1
        return kept

    def of(self, proposal_id: str) -> list[Shown]:
        raw = self.redis.hgetall(self.key(proposal_id))
        return [
            Shown.model_validate_json(str(v))
            for k, v in sorted(raw.items())
            if not str(k).startswith(TOLD)
        ]

    def listed(self) -> list[str]:
        """Every proposal shown in chat and not done with."""
        return [str(i) for i in self.redis.zrange(self.index, 0, -1)]

    def mark(self, proposal_id: str, change: str) -> bool:
        """Note that ``change`` of the proposal was told: False if it was already."""
        key = self.key(proposal_id)
        if not self.redis.exists(key):
            return False
        return bool(self.redis.hsetnx(key, f"{TOLD}{change}", "1"))

    def due(self) -> list[str]:
        """The proposals shown in chat whose deadline has passed (server time)."""
        now = server_ms(self.redis, self.index)
        return [str(i) for i in self.redis.zrangebyscore(self.index, 0, now)]

    def closed(self, proposal_id: str, shown: Shown) -> None:
        """``shown`` says what became of the proposal: nothing more to do with it."""
        self.redis.hdel(self.key(proposal_id), shown.field)

    def done(self, proposal_id: str) -> None:
        """Nothing more to do with the proposal's messages (what is left of them is kept
        until the proposal goes, for the requester's word)."""
        self.redis.zrem(self.index, proposal_id)
