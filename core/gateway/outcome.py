"""What the gateway answers: committed or rejected (as the store answers a commit) or pending,
an agent's proposal waiting for a person with the right role; and the proposal itself, which
keeps what applying it committed, or until when it may be applied."""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue
from pydantic.alias_generators import to_camel

from core.errors import DeliberateError
from core.gateway.durations import duration_text
from core.redaction import SECRET  # a secret key's value, wherever anything but its entry shows it
from core.state.actor import Actor
from core.state.codec import entry_meta
from core.state.commit_result import Committed, Rejected, outcome_fields
from core.state.mutation import Mutation, new_id
from core.time_phrases import moment_text, utc_text

__all__ = [
    "SECRET",
    "AppliedCommit",
    "Approval",
    "Denial",
    "DiscardRefused",
    "Escalation",
    "Outcome",
    "Pending",
    "Proposal",
    "ProposalStatus",
    "UnknownProposal",
    "approvals_message",
    "denials_note",
    "ending",
    "expired_message",
    "requester",
    "stale_message",
]


class UnknownProposal(DeliberateError):
    def __init__(self, proposal_id: str) -> None:
        super().__init__(f"no proposal {proposal_id} (it may have expired)")
        self.proposal_id = proposal_id


class DiscardRefused(DeliberateError):
    """A discard by someone who may not apply the proposal: ``refusal`` says why."""

    def __init__(self, refusal: Rejected) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


class ProposalStatus(StrEnum):
    PENDING = "pending"
    APPLIED = "applied"
    DISCARDED = "discarded"
    EXPIRED = "expired"  # nobody applied it before its deadline: it never will be
    STALE = "stale"  # the key moved past the version it was made against: it never will be


class Approval(BaseModel):
    """One person's approval (or edit) of a proposal, at a time of the Redis server's clock,
    and why, when they said (kept only then)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    by: Actor
    at: int
    reason: str | None = Field(default=None, exclude_if=lambda reason: reason is None)


class Denial(Approval):
    """One person's discard of a proposal whose key ends it at ``deny_at`` of them."""

    reason: str | None = None


class Escalation(BaseModel):
    """Who is told of a proposal nobody decided ``after_sec`` after it was made: ``channel``
    (``slack:C…`` or ``discord:<id>``; empty: no channel post) gets one message, and
    ``reviewers`` (``slack:U…``, ``discord:<id>``: people's ids, as roles bind them) are
    mentioned in its thread. A key pattern's ``approval.escalate``, kept in the proposal when
    it is made; checked at load against the key's expiry and the platforms' id shapes
    (``core.config.escalations``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    after_sec: int = Field(ge=60, le=30 * 86_400)
    channel: str = Field(default="", max_length=64)
    reviewers: list[str] = Field(default=[], max_length=20)


class AppliedCommit(BaseModel):
    """What applying a proposal committed, kept in the proposal for as long as it is kept: the
    mutation's idempotency record may expire long before, and a click after that is answered
    from here (never by committing again)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    mutation: Mutation  # as committed: the applier is its actor, the agent its proposedBy
    version: int
    log_id: str
    ts: int
    value_json: str | None = None  # the value it left (None after a delete)
    expires_at: int | None = None

    @classmethod
    def of(cls, done: Committed) -> AppliedCommit:
        return cls(
            mutation=done.request,
            version=done.version,
            log_id=done.log_id,
            ts=done.ts,
            value_json=done.value_json,
            expires_at=done.expires_at,
        )

    def again(self) -> Committed:
        """The commit's result once more, as the store answers a repeated mutation id."""
        m = self.mutation
        return Committed(
            m,
            self.version,
            self.log_id,
            self.ts,
            self.value_json,
            self.expires_at,
            entry_meta(m),
            duplicate=True,
        )


class Proposal(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    id: str = Field(default_factory=new_id)  # the proposed mutation's id
    mutation: Mutation
    created_at: int = Field(default_factory=lambda: int(time.time() * 1000))
    # until when it may be applied, epoch milliseconds of the Redis server's clock; None on
    # a pending proposal made by a version that did not time them (ProposalBox.deadline)
    expires_at: int | None = None
    status: ProposalStatus = ProposalStatus.PENDING
    resolved_by: Actor | None = None  # who applied (or is applying) or discarded it
    # when, epoch milliseconds of the Redis server's clock; None on a proposal applied by a
    # version that did not time claims (count it as applied)
    resolved_at: int | None = None
    committed: AppliedCommit | None = None  # set once, right after the commit: applied for good
    # who asked for the change: the person whose turn led the model to propose it, or whose
    # own write waits for approval (None: nobody, e.g. a rule's)
    requested_by: Actor | None = None
    base_version: int | None = None  # the key's version when it was made: stale past it
    quorum: int = Field(default=1, ge=1)  # distinct approvers it needs
    four_eyes: bool = False  # ``requested_by`` may not approve it
    approve_when: str | None = None  # the CEL rule its approvals must also meet
    deny_at: int | None = Field(default=None, ge=1)  # distinct denials that end it (None: 1)
    approvals: list[Approval] = []  # so far, oldest first (the last one commits it)
    denials: list[Denial] = []  # so far, under ``deny_at``: one per person
    edited: Approval | None = None  # who changed the value, and when
    value: JsonValue = None  # the value as edited (``edited``), else unused
    revision: int = Field(default=0, ge=0)  # edits so far: an approval names the one it saw
    reason: str | None = None  # why it was discarded, as its discarder said
    break_glass: str | None = None  # why its applier broke the glass (applied at once)
    escalate: Escalation | None = None  # who is told when nobody decided it for a while

    @property
    def proposed_by(self) -> Actor:
        return self.mutation.actor

    @property
    def current_value(self) -> JsonValue:
        """The value applying it would write: as edited, else as proposed."""
        return self.value if self.edited is not None else self.mutation.value

    def approved_by(self, actor: Actor) -> bool:
        return any(a.by.identity == actor.identity for a in self.approvals)

    def denied_by(self, actor: Actor) -> bool:
        return any(d.by.identity == actor.identity for d in self.denials)

    def summary(self, secret: bool = False) -> str:
        """What it would do; ``secret``: the key's values are never shown (in chat, to the
        model)."""
        m = self.mutation
        value = self.current_value
        shown = "" if value is None else f" = {SECRET}" if secret else f" = {value}"
        lasts = "" if m.for_sec is None else f" for {duration_text(m.for_sec)}"
        return f"{m.op.value} {m.key}{shown}{lasts}"


def requester(mutation: Mutation) -> Actor | None:
    """The person an agent's mutation was made for: the turn's speaker, as the model's tools
    wrote into its ``meta`` (``requestedBy``); None when it names nobody readable."""
    named = mutation.meta.get("requestedBy")
    if not isinstance(named, dict):
        return None
    try:
        return Actor.model_validate(named)
    except ValueError:
        return None


def stale_message(mutation: Mutation, now_version: int | None) -> str:
    """What a click on a proposal made against a version its key has left is told."""
    made = mutation.expected_version
    versions = "" if made is None else f" (made against v{made}"
    if versions and now_version is not None:
        versions += f", v{now_version} now"
    versions += ")" if versions else ""
    return (
        f"this proposal went stale: {mutation.key} changed since it was made{versions}; "
        "nothing was changed"
    )


def expired_message(deadline_ms: int, now_ms: int | None = None, *, ago: str = "") -> str:
    """What a click on a proposal past its deadline is told: the deadline to the second,
    and how long ago by the server's ``now_ms`` (when known), or as ``ago`` says it (a chat
    platform's markup that its clients count, in a message that stays)."""
    when = f"{utc_text(deadline_ms)} ({ago})" if ago else moment_text(deadline_ms, now_ms)
    return f"this proposal expired at {when}; nothing was changed"


@dataclass(frozen=True)
class Pending:
    mutation: Mutation
    proposal: Proposal

    name: ClassVar[str] = "pending"

    def to_dict(self) -> dict[str, Any]:
        p = self.proposal
        message = f"proposed by {self.mutation.actor}; a person with the right role applies it"
        if p.approvals:
            message = approvals_message(p)
        return outcome_fields(self.name, self.mutation) | {"proposalId": p.id, "message": message}


def approvals_message(proposal: Proposal) -> str:
    """Where a proposal that needs several approvers (or its rule) stands."""
    names = ", ".join(str(a.by) for a in proposal.approvals)
    missing = proposal.quorum - len(proposal.approvals)
    more = f"{missing} more approval{'s' if missing != 1 else ''}"
    if proposal.approve_when is not None:
        more = f"{more} meeting" if missing > 0 else "approvals meeting"
        more += f" {proposal.approve_when}"
    said = f"approved by {names} ({len(proposal.approvals)} of {proposal.quorum}); awaits {more}"
    return said + denials_note(proposal)


def denials_note(proposal: Proposal) -> str:
    """``; denied by …`` (n of ``deny_at``), or nothing when nobody has denied it."""
    if not proposal.denials or proposal.deny_at is None:
        return ""
    names = ", ".join(str(d.by) for d in proposal.denials)
    return f"; denied by {names} ({len(proposal.denials)} of {proposal.deny_at} that end it)"


Outcome = Committed | Rejected | Pending


_ENDINGS = (ProposalStatus.DISCARDED, ProposalStatus.EXPIRED, ProposalStatus.STALE)


def ending(before: Proposal, after: Proposal) -> str | None:
    """How a move from ``before`` to ``after`` ended a proposal, if it did: ``applied`` once
    what it committed is written in (a claim alone may still be handed back), else
    ``discarded``, ``expired`` or ``stale``."""
    if after.committed is not None and before.committed is None:
        return "applied"
    if after.status is not before.status and after.status in _ENDINGS:
        return after.status.value
    return None
