"""A proposal's deadlines as they stand, read where each is kept: until when it may be
applied (``ProposalBox.deadline``), when it is (or was) escalated to its reviewers (its
``approval.escalate``, kept in it, and the sweep's marker of when it posted it), and, for a
change for a while, when it reverts (pending: that long after it is applied; applied: its
commit's revert, waiting, made or refused, ``core.gateway.timed``). Said in the words of
``core.time_phrases`` against the Redis server's clock, by the CLI (``proposals``,
``trace``), the chat's ``pending`` and the web Inbox alike; and where each change for a
while a trace shows stands now (``timed_steps``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.gateway.outcome import Proposal, ProposalStatus
from core.gateway.timed import timed_change
from core.time_phrases import TimedChange, escalation_phrase, expiry_phrase, lasting_phrase

from .escalation import escalated_at

if TYPE_CHECKING:
    from bot.app import App

__all__ = ["ProposalDeadlines", "deadlines_of", "timed_steps"]


@dataclass(frozen=True)
class ProposalDeadlines:
    """``now``: the server's clock when read; ``escalates_at`` None: no escalation (or none
    made before it was resolved); ``timed``: its applied change's revert."""

    now: int
    pending: bool
    expires_at: int
    escalates_at: int | None = None
    escalated_at: int | None = None
    lasts_sec: float | None = None
    timed: TimedChange | None = None

    @property
    def expiry(self) -> str:
        return expiry_phrase(self.expires_at, self.now)

    @property
    def escalation(self) -> str | None:
        if self.escalates_at is None:
            return None
        return escalation_phrase(self.escalates_at, self.escalated_at, self.now)

    @property
    def revert(self) -> str | None:
        """When its change reverts: once applied, by its commit's revert; before, how long
        after it is applied."""
        if self.timed is not None:
            return self.timed.phrase(self.now)
        if self.pending and self.lasts_sec is not None:
            return lasting_phrase(self.lasts_sec)
        return None

    def to_dict(self) -> dict[str, Any]:
        """As ``deliberate proposals --json`` adds them (server ms)."""
        data: dict[str, Any] = {"deadline": self.expires_at}
        if self.escalates_at is not None:
            data["escalatesAt"] = self.escalates_at
        if self.escalated_at is not None:
            data["escalatedAt"] = self.escalated_at
        if self.timed is not None:
            t = self.timed
            data["revert"] = {"mutationId": t.by, "at": t.at, "state": t.state}
        return data

    def named(self, *, expired: bool = False) -> list[tuple[str, str]]:
        """What is said of it, each with what it is (``expiry``, ``escalation``, ``revert``):
        its expiry while pending (and once it expired, with ``expired``), its escalation,
        its revert."""
        said = [("expiry", self.expiry)] if self.pending or expired else []
        for kind, phrase in (("escalation", self.escalation), ("revert", self.revert)):
            if phrase is not None:
                said.append((kind, phrase))
        return said

    def phrases(self) -> list[str]:
        return [phrase for _, phrase in self.named()]


def deadlines_of(app: App, proposal: Proposal, now: int) -> ProposalDeadlines:
    """``proposal``'s deadlines at ``now`` (the server's clock)."""
    pending = proposal.status is ProposalStatus.PENDING
    rule = proposal.escalate
    done = escalated_at(app.redis, app.store.workspace, proposal.id) if rule else None
    escalates = None if rule is None else proposal.created_at + rule.after_sec * 1000
    if done == 0 and escalates is not None:  # a marker that did not say when: not before due
        done = escalates
    expires = app.gateway.proposals.deadline(proposal)
    if done is None and (not pending or (escalates is not None and escalates >= expires)):
        escalates = None  # decided (or expired) before it was due: it never will be
    elif done is None and pending and expires <= now:
        escalates = None  # past its deadline, never escalated: nor will it be
    committed = proposal.committed
    timed = None
    if committed is not None:
        reverts = committed.mutation.reverts_at(committed.ts)
        if reverts is not None:
            timed = timed_change(app.store, committed.mutation.id, reverts)
    return ProposalDeadlines(
        now=now,
        pending=pending,
        expires_at=expires,
        escalates_at=escalates,
        escalated_at=done,
        lasts_sec=proposal.mutation.for_sec,
        timed=timed,
    )


def timed_steps(app: App, steps: list[dict[str, Any]], now: int) -> list[str]:
    """Where each change for a while among a trace's steps stands now: ``KEY (mutation
    ID): reverts at …`` (or reverted, or not)."""
    said = []
    for step in steps:
        data = step["data"]
        if step["event"] == "mutation" and data.get("revertsAt"):
            change = timed_change(app.store, data["id"], data["revertsAt"])
            said.append(f"{data['key']} (mutation {data['id']}): {change.phrase(now)}")
    return said
