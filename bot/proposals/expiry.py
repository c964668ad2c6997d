"""Closing the chat messages of expired proposals: each message recorded as showing one
(``ShownMessages``) is edited on its platform to say "⌛ This proposal expired at …", its
buttons gone, below the lines earlier clicks on it added (``ClickLines``). The worker runs
it after each expiry sweep, with the bot tokens from the environment; a click that finds a
proposal expired runs it for its own platform at once. The closers live with their
adapters (``bot.slack.closing``, ``bot.discord.closing``); ``closers`` builds them from the
environment.

It is idempotent: the expiry line joins a message's lines once (the click that found it
expired may have added it already), each message is forgotten once edited, and a message
that could not be edited (the platform down, no token here) is tried again next time."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from redis.exceptions import LockError

from bot.proposals.click_lines import ClickLines
from core.gateway.outcome import ProposalStatus, expired_message
from core.state.actor import Actor

from .refs import Install, Shown, ShownMessages

if TYPE_CHECKING:
    from bot.app import App

__all__ = [
    "API_TIMEOUT_SEC",
    "ByPlatform",
    "Closer",
    "Closers",
    "ExpiredMessages",
    "expired_sentence",
]

log = logging.getLogger("deliberate.shown")
API_TIMEOUT_SEC = 10  # how long a closer waits on its platform's API


class Closer(Protocol):
    """Edits messages of one platform, posts in their threads, and writes to their people."""

    def line(self, deadline_ms: int) -> str:
        """The expiry line, in the platform's markup (as a click that finds it expired):
        the deadline in UTC, and how long ago as the platform's clients count it."""
        ...

    def edit(self, shown: Shown, lines: list[str]) -> bool:
        """``shown`` without buttons, with ``lines`` below its text; False if not done."""
        ...

    def tell(self, shown: Shown, who: Actor, text: str) -> bool:
        """Post ``text`` (plain: made inert here) in ``shown``'s thread, to ``who`` (a
        mention of one of the platform's own people, who alone is pinged)."""
        ...

    def post(self, channel: str, reply_to: str | None, whom: list[str], text: str) -> bool:
        """Post ``text`` (plain: made inert here) in ``channel`` (a reply to, or in the thread
        of, message ``reply_to`` when given), mentioning the platform's users ``whom`` (ids),
        who alone are pinged."""
        ...

    def dm(self, shown: Shown, who: Actor, text: str) -> bool:
        """Send ``text`` (plain: made inert here) to ``who`` alone in a direct message,
        saying where ``shown`` is; only to a person of the team (or server) ``shown`` was
        posted in: anyone else, a bot, an unknown id get nothing. False if not sent."""
        ...


class Closers(Protocol):
    """The closers a process has: which one reaches a message (on Slack, the token of the
    team it was posted from), or posts on a platform for an installation."""

    def of(self, shown: Shown) -> Closer | None:
        """The closer with the token that reaches ``shown``; None when there is none."""
        ...

    def at(self, platform: str, install: Install | None) -> Closer | None:
        """The closer of ``platform`` with ``install``'s token (Slack's; Discord has one)."""
        ...


class ByPlatform:
    """Closers with one token each: ``closers`` by platform name (none: nothing is reached)."""

    def __init__(self, closers: Mapping[str, Closer] | None = None) -> None:
        self.closers = dict(closers or {})

    def of(self, shown: Shown) -> Closer | None:
        return self.at(shown.platform, shown.install)

    def at(self, platform: str, install: Install | None) -> Closer | None:
        return self.closers.get(platform)


def expired_sentence(deadline_ms: int, ago: str) -> str:
    """ "This proposal expired at 2026-05-01 12:00:00 UTC (…); nothing was changed.", as the
    message of an expired proposal says it once closed: ``ago`` is how long ago in its
    platform's markup, which each reader's client counts (a "3 min ago" written into a
    message that stays would be wrong an hour later). Nothing in it needs escaping."""
    said = expired_message(deadline_ms, ago=ago)
    return said[:1].upper() + said[1:] + "."


class ExpiredMessages:
    """One workspace's messages of expired proposals, closed by ``closers`` (by platform)."""

    def __init__(self, app: App, closers: Closers) -> None:
        self.app = app
        self.closers = closers
        self.shown = ShownMessages.in_workspace(app)
        self.lines = ClickLines(app.redis, app.store.workspace, app.config.sessions.ttl_sec)

    def run(self) -> int:
        """Close the messages of every proposal past its deadline; how many were edited. A
        proposal leaves the index once nothing is left to do with its messages."""
        edited = 0
        for proposal_id in self.shown.due():
            done, left = self._close_all(proposal_id)
            edited += done
            if not left:
                self.shown.done(proposal_id)
        return edited

    def close(self, proposal_id: str, already: Shown | None = None) -> int:
        """Close the messages of ``proposal_id`` if it expired (``already`` is closed: a
        clicked one); how many were edited. It stays in the index for the sweep (its
        requester is told first)."""
        return self._close_all(proposal_id, already)[0]

    def _close_all(self, proposal_id: str, already: Shown | None = None) -> tuple[int, bool]:
        """Edited, and whether anything is left to do (a pending one waits for the sweep; one
        resolved otherwise, or gone, has nothing to close)."""
        box = self.app.gateway.proposals
        proposal = box.get(proposal_id)
        if proposal is not None and proposal.status is ProposalStatus.PENDING:
            return 0, True
        if proposal is None or proposal.status is not ProposalStatus.EXPIRED:
            return 0, False
        edited, left = 0, False
        for shown in self.shown.of(proposal_id):
            if already is not None and shown.field == already.field:
                self.shown.closed(proposal_id, shown)
                continue
            closer = self.closers.of(shown)
            if closer is None or not self._close(closer, shown, box.deadline(proposal)):
                left = True
                continue
            self.shown.closed(proposal_id, shown)
            edited += 1
        return edited, left

    def _close(self, closer: Closer, shown: Shown, deadline_ms: int) -> bool:
        line = closer.line(deadline_ms)
        try:
            with self.lines.lock(shown.platform, shown.ref):
                lines = self.redis_lines(shown)
                if line not in lines:
                    lines = self.lines.add(shown.platform, shown.ref, line)
                return closer.edit(shown, lines)
        except LockError as error:
            log.warning("cannot close %s message %s: %s", shown.platform, shown.ref, error)
            return False

    def redis_lines(self, shown: Shown) -> list[str]:
        key = self.lines.key(shown.platform, shown.ref)
        return [str(x) for x in self.app.redis.lrange(key, 0, -1)]
