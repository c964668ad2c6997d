"""Telling the person who asked for a change what became of it: one short message in the
thread where the proposal was shown, at each change (applied, edited, discarded with its
reason, expired, gone stale), whichever path made it (a click, a form, the web Inbox, the
CLI, the sweep), and a direct message too where the key's ``tell`` says ``dm``. The worker
reads each proposal shown in chat at its sweep and tells what changed since it last looked:
a change is told once (a marker per proposal, status and revision, set before the messages
go: at most once, even with two workers), and one its requester made themselves is not told
back to them.

The direct message goes with the token of the team (or server) the proposal was shown in on
the requester's platform, and only to a person of it (``Closer.dm``): a requester of another
platform, a bot, an id the platform does not know, a person of another team get nothing
(said in the debug log). One that fails is a line in the log; the thread's message, and
later changes, are told all the same."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from core.gateway.outcome import Proposal, ProposalStatus, expired_message
from core.state.actor import Actor
from core.time_phrases import moment_text

from .expiry import Closer, Closers
from .refs import Shown, ShownMessages

if TYPE_CHECKING:
    from bot.app import App

__all__ = ["Requesters", "change_of", "requester_of"]

log = logging.getLogger("deliberate.shown")


def requester_of(proposal: Proposal) -> Actor | None:
    """Who asked for it: ``requestedBy``, else its proposer when a person."""
    if proposal.requested_by is not None:
        return proposal.requested_by
    proposer = proposal.proposed_by
    return proposer if proposer.is_person else None


def change_of(proposal: Proposal) -> tuple[str, Actor | None] | None:
    """The proposal's last change as a marker and who made it; None while nothing changed
    (pending, never edited)."""
    if proposal.status is ProposalStatus.PENDING:
        if proposal.edited is None:
            return None
        return f"edited:{proposal.revision}", proposal.edited.by
    if proposal.status is ProposalStatus.APPLIED and proposal.committed is None:
        return None  # claimed, not yet committed: told once it is
    return proposal.status.value, proposal.resolved_by


class Requesters:
    """One workspace's requesters, told through ``closers`` (by platform)."""

    def __init__(self, app: App, closers: Closers) -> None:
        self.app = app
        self.closers = closers
        self.shown = ShownMessages.in_workspace(app)

    def run(self) -> int:
        """Tell each requester what changed since the last run; how many were told."""
        return sum(self.tell(proposal_id) for proposal_id in self.shown.listed())

    def tell(self, proposal_id: str) -> bool:
        proposal = self.app.gateway.proposals.get(proposal_id)
        if proposal is None:
            return False
        who, change = requester_of(proposal), change_of(proposal)
        if who is None or change is None:
            return False
        marker, by = change
        if by is not None and by.identity == who.identity:
            return False  # their own doing: nothing to tell them
        ways = self.app.policy.tell(proposal.mutation.key)
        shown = self.shown.of(proposal_id)
        thread = self._reach(shown, who, mine_only=False) if ways.thread else None
        direct = self._reach(shown, who, mine_only=True) if ways.dm else None
        if thread is None and direct is None:
            return False
        if not self.shown.mark(proposal_id, marker):
            return False  # told already
        text = self.sentence(proposal, by)
        told = thread is not None and thread[1].tell(thread[0], who, text)
        if direct is not None:
            told = direct[1].dm(direct[0], who, text[:1].upper() + text[1:]) or told
        elif ways.dm:
            log.debug("no direct message to %s: %s not shown on their platform", who, proposal_id)
        return told

    def _reach(
        self, shown: list[Shown], who: Actor, *, mine_only: bool
    ) -> tuple[Shown, Closer] | None:
        """The first message that showed it on the requester's platform (unless
        ``mine_only``, else any) that a closer here reaches."""
        mine = [s for s in shown if s.platform == who.platform]
        others = [] if mine_only else [s for s in shown if s.platform != who.platform]
        for each in mine + others:
            closer = self.closers.of(each)
            if closer is not None:
                return each, closer
        return None

    def sentence(self, proposal: Proposal, by: Actor | None) -> str:
        """What became of the change they asked for (a secret key's value not shown); when,
        by the server's clock as it is told."""
        what = proposal.summary(secret=self.app.policy.is_secret(proposal.mutation.key))
        whom = f" by {by}" if by is not None else ""
        status = proposal.status
        if status is ProposalStatus.PENDING:
            return f"your change was edited{whom}: now {what}; it waits for approval again."
        if status is ProposalStatus.APPLIED:
            return f"your change was applied{whom}: {what}."
        if status is ProposalStatus.DISCARDED:
            reason = f" ({proposal.reason})" if proposal.reason else ""
            return f"your change was discarded{whom}: {what}{reason}; nothing was changed."
        # a message that stays: the moment to the second, no "ago" that would go stale
        box = self.app.gateway.proposals
        if status is ProposalStatus.EXPIRED:
            return f"your change ({what}): {expired_message(box.deadline(proposal))}."
        resolved = proposal.resolved_at
        at = "" if resolved is None else f" at {moment_text(resolved)}"
        return f"your change ({what}) went stale{at}: its key changed since; nothing was changed."
