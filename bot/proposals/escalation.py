"""Escalating a proposal nobody decided: ``approval.escalate.after_sec`` after it was made,
a pending proposal is posted once to its key's escalation channel (if the config names one)
and its reviewers are mentioned in the thread where it was shown, each platform's in its
own thread. The worker runs it at its minute's sweep. A marker per proposal is set before
anything is posted (at most once, even with two workers, as ``telling`` does); a post that
fails is not tried again. The message says what waits (a secret key's value as
``(secret)``), since when, who asked, and where to decide."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from core.config.tenants import Tenancy
from core.gateway.outcome import Escalation, Proposal, ProposalStatus
from core.state.keys import WorkspaceKeys
from core.state.scripts import server_ms
from core.time_phrases import moment_text

from .expiry import Closers
from .refs import Install, Shown, ShownMessages
from .telling import requester_of

if TYPE_CHECKING:
    from bot.app import App
    from core.redis.client import RedisClient

__all__ = ["Escalations", "escalated_at", "escalation_text", "tenant_install"]

log = logging.getLogger("deliberate.shown")

MARKER = "escalated:"  # the adapter key's name: ``{ws:<id>}:adapter:chat:escalated:<id>``,
# holding when it was escalated (server ms; "1" where a release did not time it)
KEPT_MS = 86_400_000  # a marker's life when its proposal's key has none


def tenant_install(app: App) -> Install | None:
    """The installation of the Slack team (or org) the config lists for ``app``'s
    workspace, as Bolt would find it (an org's as installed org-wide); None for another."""
    for tenant in Tenancy(app.config.tenants, app.config.roles).configured():
        if tenant.platform == "slack" and tenant.workspace == app.store.workspace:
            if tenant.is_org:
                return Install(None, tenant.id, org_install=True)
            return Install(tenant.id)
    return None


def escalation_text(
    proposal: Proposal, what: str, in_thread: bool, now_ms: int | None = None
) -> str:
    """What the reviewers and the channel are told: ``what`` is the proposal's summary (the
    value masked when the key is secret); since when, to the second (a posted message stays:
    how long ago, by the server's ``now_ms``, only where it is read at once)."""
    asker = requester_of(proposal) or proposal.proposed_by
    where = "with its buttons above" if in_thread else "with its buttons where it was shown"
    return (
        f"awaiting a decision since {moment_text(proposal.created_at, now_ms)}: {what} "
        f"(asked by {asker}). Apply or Discard it {where}, or in the web Inbox."
    )


def _marker(keys: WorkspaceKeys, proposal_id: str) -> str:
    return keys.adapter("chat", f"{MARKER}{proposal_id}")


def escalated_at(client: RedisClient, workspace: str, proposal_id: str) -> int | None:
    """When the sweep escalated the proposal (server ms; 0 when a release that did not time
    it did), or None: not escalated."""
    raw = client.get(_marker(WorkspaceKeys(workspace), proposal_id))
    if raw is None:
        return None
    text = str(raw)
    return int(text) if text.isdigit() and len(text) > 1 else 0


class Escalations:
    """One workspace's undecided proposals, escalated through ``closers`` (by platform)."""

    def __init__(self, app: App, closers: Closers) -> None:
        self.app = app
        self.closers = closers
        self.shown = ShownMessages.in_workspace(app)
        self.keys = WorkspaceKeys(app.store.workspace)
        self.tenant = tenant_install(app)

    def run(self, now_ms: int | None = None) -> int:
        """Escalate each pending proposal past its delay, once; how many were escalated."""
        box = self.app.gateway.proposals
        now = server_ms(self.app.redis, box.keys.versions) if now_ms is None else now_ms
        escalated = 0
        for proposal in box.listed():
            rule = proposal.escalate
            if proposal.status is not ProposalStatus.PENDING or rule is None:
                continue
            if now < proposal.created_at + rule.after_sec * 1000 or now >= box.deadline(proposal):
                continue
            if self._mark(proposal.id, now):
                escalated += self._post(proposal, rule, now)
        return escalated

    def marker(self, proposal_id: str) -> str:
        return _marker(self.keys, proposal_id)

    def _mark(self, proposal_id: str, now: int) -> bool:
        """Note when it escalated (kept as long as the proposal is): False if it already was."""
        ttl = int(self.app.redis.pttl(self.app.gateway.proposals.keys.proposal(proposal_id)))
        kept = ttl if ttl > 0 else KEPT_MS
        return bool(self.app.redis.set(self.marker(proposal_id), str(now), nx=True, px=kept))

    def _post(self, proposal: Proposal, rule: Escalation, now: int) -> bool:
        secret = self.app.policy.is_secret(proposal.mutation.key)
        what = proposal.summary(secret=secret)
        posted = False
        if rule.channel:
            platform, _, channel = rule.channel.partition(":")
            closer = self.closers.at(platform, self._install(proposal.id, platform))
            if closer is None:
                log.warning("cannot escalate %s to %s: no token", proposal.id, rule.channel)
            else:
                text = escalation_text(proposal, what, in_thread=False)
                posted |= closer.post(channel, None, [], text)
        for shown, whom in self._threads(proposal.id, rule).values():
            closer = self.closers.of(shown)
            if closer is None:
                continue
            text = escalation_text(proposal, what, in_thread=True)
            posted |= closer.post(shown.channel, shown.thread or shown.message, whom, text)
        return posted

    def _install(self, proposal_id: str, platform: str) -> Install | None:
        """Whose token posts to a channel of ``platform``: the installation a message of
        the proposal was posted from there, else the workspace's listed Slack team's."""
        for shown in self.shown.of(proposal_id):
            if shown.platform == platform:
                return shown.install
        return self.tenant

    def _threads(self, proposal_id: str, rule: Escalation) -> dict[str, tuple[Shown, list[str]]]:
        """Where each platform's reviewers are mentioned: the first message that showed the
        proposal there. A reviewer of a platform it was not shown on is not reached."""
        whom: dict[str, list[str]] = {}
        for reviewer in rule.reviewers:
            platform, _, ident = reviewer.partition(":")
            whom.setdefault(platform, []).append(ident)
        found: dict[str, tuple[Shown, list[str]]] = {}
        for shown in self.shown.of(proposal_id):
            if shown.platform in whom and shown.platform not in found:
                found[shown.platform] = (shown, whom[shown.platform])
        for platform in set(whom) - set(found):
            log.info("escalation of %s: not shown on %s, reviewers not told", proposal_id, platform)
        return found
