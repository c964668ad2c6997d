"""How a key came to hold its value: the mutation that set it (actor, reason, the rule that
derived it and that rule's cause) and what rules did with its changes; and what waits for
people to decide: each proposal, whom it awaits, or what became of it. Shared by
``deliberate rules why``, ``deliberate proposals`` and the chat adapters' ``why`` and
``pending``."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from bot.proposals.deadlines import ProposalDeadlines
from bot.reports.render import json_line, rule_step, rule_verdict
from bot.screen import one_line
from core.gateway.outcome import SECRET, Approval, Proposal, ProposalStatus, denials_note
from core.state.actor import ActorKind
from core.state.mutation import Mutation
from core.state.mutation_log import KeyHistory, LogRecord
from core.time_phrases import moment_text

if TYPE_CHECKING:
    from bot.app import App
    from core.gateway.policy import Policy

__all__ = [
    "Awaiting",
    "awaiting",
    "evaluation_line",
    "last_change",
    "masked_record",
    "origin",
    "proposal_lines",
    "proposal_summary",
    "unsearched",
]

CAUSE_SCAN = 5000  # how far back the cause of a derived mutation is looked for
_WHEN = "%Y-%m-%d %H:%M:%SZ"


def masked_record(app: App, record: LogRecord) -> dict[str, Any]:
    """``record`` as JSON: the log keeps a secret key's values; a window shows them
    masked."""
    return replace(record, mutation=app.gateway.secrecy.mutation(record.mutation)).to_dict()


def origin(app: App, record: LogRecord, *, reveal: bool = True) -> str:
    """The mutation behind ``record``'s key; ``reveal=False`` hides its value."""
    m = record.mutation
    shown = json_line(m.value)[:120] if reveal else SECRET
    value = "" if m.value is None else f" {shown}"
    line = f"{m.key}: {m.op.value}{value} -> v{record.version} by {m.actor}"
    if m.reason:  # on the line: a reason's line breaks shown as \n
        line += f", reason: {one_line(m.reason)}"
    if m.proposed_by is not None:
        line += f", proposed by {m.proposed_by}"
    rule = m.meta.get("rule")
    if rule:
        line += f"\n  derived by rule {rule}"
        cause = _cause(app, m.causation_id)
        if cause is not None:
            line += f" from {cause.key} ({cause.op.value} by {cause.actor}, mutation {cause.id})"
    return line + f"\n  mutation {m.id}, correlation {m.correlation_id}"


def last_change(app: App, key: str, version: int, history: KeyHistory, *, reveal: bool) -> str:
    """What the entry itself says of ``key``'s last change, when its log record was not
    found among the records ``history`` read."""
    entry = app.store.get(key)
    if entry is None or entry.version != version:
        line = f"{key}: v{version}, since deleted or expired"
    else:
        shown = json_line(entry.value)[:120] if reveal else SECRET
        when = datetime.fromtimestamp(entry.updated_at / 1000, UTC).strftime(_WHEN)
        line = f"{key}: v{version} by {entry.updated_by} at {when} = {shown}"
        if entry.meta.get("reason"):
            line += f", reason: {one_line(str(entry.meta['reason']))}"
    if history.complete:
        mark = app.log.compacted()
        gone = f": {mark}" if mark is not None else ""
        return line + f"\n  its mutation is no longer in the log{gone}"
    return line + f"\n  its mutation is older than the newest {history.scanned} records of the log"


def unsearched(app: App, key: str, history: KeyHistory) -> str:
    """The honest end of an answer that read only the newest records of a long log."""
    lead = "No older change" if history.records else "No change"
    return (
        f"{lead} of {key} among the newest {history.scanned} records of the log "
        f"(it holds {len(app.log)}); older ones are not searched here."
    )


def _cause(app: App, mutation_id: str | None) -> Mutation | None:
    if mutation_id is None:
        return None
    for record in reversed(app.log.latest(CAUSE_SCAN)):
        if record.mutation.id == mutation_id:
            return record.mutation
    return None


def evaluation_line(row: dict[str, Any]) -> str:
    """One entry of the rules' evaluation log: a verdict, or what a step did."""
    data = row["data"]
    head = f"{row['event']} {data.get('rule')}"
    if row["event"] in ("evaluated", "cut", "error"):
        return f"{head}: {rule_verdict(data)}"
    return f"{head} {rule_step(data)}"


# --- proposals: what waits for people, and what became of the rest ---------------------------

_NOT_PEOPLE = frozenset(
    {ActorKind.AGENT.value, ActorKind.AUTOMATION.value, ActorKind.CONNECTOR.value}
    | {ActorKind.SYSTEM.value}
)
_PRIVILEGED = ("moderator", "admin")
SUMMARY_CHARS = 120


@dataclass(frozen=True)
class Awaiting:
    """Whom a pending proposal waits for: ``more`` approvals by people holding one of
    ``roles`` (the key's writers; moderator or admin if it is protected), neither the
    ``requester`` (under four eyes) nor any of the ``approvers`` so far."""

    roles: tuple[str, ...]
    more: int
    requester: str | None = None
    approvers: tuple[str, ...] = ()
    why_not: str = ""  # nobody can approve it: why

    def text(self) -> str:
        if self.why_not:
            return f"awaits nobody who can apply it: {self.why_not}"
        roles = _either(self.roles)
        approvals = f"{self.more} more approvals, each" if self.more > 1 else "1 more approval"
        article = "an" if roles[:1] in ("a", "e", "i", "o") else "a"  # (a user)
        asked = [f"{self.requester} (asked for it)"] if self.requester else []
        excluded = "".join(f", not {name}" for name in [*asked, *self.approvers])
        return f"awaits {approvals} by {article} {roles}{excluded}"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"roles": list(self.roles), "more": self.more}
        excluded = [*([self.requester] if self.requester else []), *self.approvers]
        if excluded:
            data["not"] = excluded
        if self.why_not:
            data["nobody"] = self.why_not
        return data


def awaiting(policy: Policy, proposal: Proposal) -> Awaiting:
    """Whom ``proposal`` waits for, as the key's policy says."""
    more = max(proposal.quorum - len(proposal.approvals), 1)
    approvers = tuple(str(a.by) for a in proposal.approvals)
    asked = proposal.requested_by if proposal.four_eyes else None
    requester = None if asked is None else str(asked)
    key = proposal.mutation.key
    rule = policy.rule_for(key)
    if rule is None:
        return Awaiting((), more, why_not=f"no policy pattern allows {key}")
    roles = [r for r in rule.writers if r not in _NOT_PEOPLE]
    if rule.protected and roles:
        # only a moderator or an admin, who must also hold a writer's role
        privileged = [r for r in roles if r in _PRIVILEGED]
        also = _either(tuple(roles))
        roles = privileged or [f"{p} who is also {also}" for p in _PRIVILEGED]
    if not roles:
        return Awaiting((), more, why_not=f"no person may write {key}")
    return Awaiting(tuple(roles), more, requester, approvers)


def proposal_summary(proposal: Proposal, *, reveal: bool = True) -> str:
    """``set KEY = VALUE`` (as edited), the value cut short, or hidden (``reveal=False``)."""
    m = proposal.mutation
    value = proposal.current_value
    if value is None:
        return f"{m.op.value} {m.key}"
    shown = _plain(value) if reveal else SECRET
    return f"{m.op.value} {m.key} = {shown}"


def proposal_lines(
    policy: Policy,
    proposal: Proposal,
    deadlines: ProposalDeadlines,
    *,
    reveal: bool = True,
    named: str | None = None,
) -> list[str]:
    """A proposal as people read it, in three lines or four: its id (or ``named``) and what
    it would do; who proposed it, for whom, how long ago, and its deadlines
    (``bot.proposals.deadlines``): until when, its escalation, its revert; its approvals so far;
    whom it awaits, or what became of it."""
    p = proposal
    status = "" if p.status is ProposalStatus.PENDING else f"  [{p.status.value}]"
    if p.status is ProposalStatus.APPLIED and p.break_glass:
        status = "  [applied, break-glass]"
    lines = [f"{named or p.id}  {proposal_summary(p, reveal=reveal)}{status}"]
    who = f"proposed by {p.proposed_by}"
    if p.requested_by == p.proposed_by:  # a person's own write, waiting for approval
        who = f"proposed and requested by {p.proposed_by}"
    elif p.requested_by is not None:
        who += f", requested by {p.requested_by}"
    age = f"{_age(deadlines.now - p.created_at)} ago"
    lines.append(f"  {who}, {age}" + "".join(f"; {said}" for said in deadlines.phrases()))
    names = f" ({', '.join(map(_approver, p.approvals))})" if p.approvals else ""
    approvals = f"approvals {len(p.approvals)} of {p.quorum}{names}"
    if p.four_eyes:
        approvals += "; four eyes"
    if p.approve_when is not None:
        approvals += f"; when {p.approve_when}"
    approvals += denials_note(p)
    if p.edited is not None:
        proposed = _plain(p.mutation.value) if reveal else SECRET
        approvals += f"; edited by {p.edited.by} (proposed: {proposed}), revision {p.revision}"
    if p.status is ProposalStatus.PENDING:
        return [*lines, f"  {approvals}", f"  {awaiting(policy, p).text()}"]
    return [*lines, f"  {approvals}", f"  {_became(p, deadlines)}"]


def _approver(approval: Approval) -> str:
    """Who approved, and why when they said."""
    said = f' "{one_line(approval.reason)}"' if approval.reason else ""
    return f"{approval.by}{said}"


def _became(p: Proposal, deadlines: ProposalDeadlines) -> str:
    """What became of a proposal no longer pending: who, when, and why."""
    by = f" by {p.resolved_by}" if p.resolved_by is not None else ""
    at = f" at {moment_text(p.resolved_at, deadlines.now)}" if p.resolved_at is not None else ""
    if p.status is ProposalStatus.APPLIED:
        done = p.committed
        made = f" (v{done.version}, mutation {done.mutation.id})" if done is not None else ""
        glass = f"; broke the glass: {p.break_glass}" if p.break_glass else ""
        return f"applied{by}{at}{made}{glass}"
    if p.status is ProposalStatus.DISCARDED:
        return f"discarded{by}{at}: {p.reason or 'no reason given'}"
    if p.status is ProposalStatus.EXPIRED:
        return f"{deadlines.expiry}: nobody applied it in time"
    base = f" past v{p.base_version}" if p.base_version is not None else ""
    return f"went stale{at}: {p.mutation.key} moved{base} before it was applied"


def _plain(value: JsonValue) -> str:
    """A value as a summary shows it: a string as it is, anything else as JSON; cut short."""
    text = value if isinstance(value, str) else json_line(value)
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


def _either(roles: tuple[str, ...]) -> str:
    return roles[0] if len(roles) == 1 else f"{', '.join(roles[:-1])} or {roles[-1]}"


def _age(ms: int) -> str:
    seconds = max(ms, 0) // 1000
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
