"""How a key's proposals are approved: a quorum of distinct people, four eyes, and a rule in
CEL (the language beats are written in) over the approvals and denials so far, the requester
and the mutation. The rule is checked when the config loads (syntax, the names it reads, the
functions it calls, a result that is not a bool), so that a mistake names its file, line and
field; when a proposal is counted it is evaluated, pure, and an error counts as not met."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.cel.checks import cel_problem, compiled
from core.gateway.outcome import Escalation

if TYPE_CHECKING:
    from core.gateway.outcome import Approval, Proposal
    from core.state.actor import Actor

__all__ = [
    "RULE_VARIABLES",
    "ApprovalRule",
    "BreakGlassRule",
    "TellRule",
    "rule_met",
    "when_problem",
]

_log = logging.getLogger("deliberate.gateway")

RULE_VARIABLES = frozenset({"approvals", "denials", "requester", "mutation"})


class BreakGlassRule(BaseModel):
    """Who may break the glass: a person holding ``role`` (a tenant's binding, or an actor
    kind) may apply a change at once, with a reason, skipping the approvals it would wait
    for (quorum, four eyes, ``when``, ``people``); flagged, announced and listed for review."""

    model_config = ConfigDict(extra="forbid")

    role: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:\-]+$")


class TellRule(BaseModel):
    """How the person who asked for a change hears what became of it (applied, edited,
    discarded with the reason, expired, gone stale): ``thread``, a message mentioning them in
    the thread where it was shown; ``dm``, a direct message from the bot too."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    thread: bool = True
    dm: bool = False


class ApprovalRule(BaseModel):
    """How a proposal for a key is approved. ``quorum``: distinct people who must approve it
    (it commits at the last, once); ``when``: a CEL rule the approvals must also meet (it
    commits at the first approval that meets both); ``deny_at``: this many distinct people
    discarding it end it (without: the first discard does); ``four_eyes``: the person who
    asked for the change (the turn that led the model to propose it, or the person whose
    write waits) may not approve it; ``people``: a person's own write (an app action's
    button) also waits for approval, as an agent's does; ``expire_after_sec``: how long it
    may wait (else the policy's ``proposals.expire_after_sec``); ``break_glass``: who may
    apply at once, with a reason (else the policy's ``break_glass``); ``escalate``: who is told
    of it when nobody decided it for a while; ``tell``: how its requester hears of each change
    (else the policy's ``proposals.tell``)."""

    model_config = ConfigDict(extra="forbid")

    quorum: int = Field(default=1, ge=1, le=10)
    when: str | None = Field(default=None, min_length=1, max_length=2000)
    deny_at: int | None = Field(default=None, ge=1, le=10)
    four_eyes: bool = False
    people: bool = False
    expire_after_sec: int | None = Field(default=None, ge=60, le=30 * 86_400)
    break_glass: BreakGlassRule | None = None
    escalate: Escalation | None = None
    tell: TellRule | None = None

    @field_validator("when")
    @classmethod
    def _when_compiles(cls, when: str | None) -> str | None:
        problem = None if when is None else when_problem(when)
        if problem is not None:
            raise ValueError(problem)
        return when


def when_problem(when: str) -> str | None:
    """What is wrong with the rule ``when``, or None: it does not compile, reads a name
    other than ``approvals``, ``denials``, ``requester`` and ``mutation`` (or one a macro
    binds), calls a function CEL does not have, or gives something other than a bool."""
    problem = cel_problem(when, dict.fromkeys(RULE_VARIABLES))
    if problem is not None and problem.startswith("CEL has no function"):
        return (
            f"{problem}; count with a macro, e.g. "
            'approvals.filter(a, "moderator" in a.roles).size() >= 1'
        )
    if problem is not None:
        return problem
    program = compiled(when)
    try:
        result = program.execute(_SAMPLE)
    except Exception:  # cel raises IndexError, OverflowError, ... too
        return None  # reads what the sample has not: judged on real proposals
    if not isinstance(result, bool):
        return f"CEL gives {type(result).__name__}, not a bool"
    return None


def rule_met(proposal: Proposal) -> bool:
    """Whether ``proposal``'s approvals meet its rule (no rule: they do). An error (a field
    a value lacks, a type mismatch) or a result that is not a bool: not met, and logged."""
    if proposal.approve_when is None:
        return True
    try:
        result = compiled(proposal.approve_when).execute(activation(proposal))
    except Exception as exc:  # any error of the rule (an index past the end,
        # an overflow on a value from chat) leaves it unmet, never the click failing
        _log.warning("approval rule of proposal %s: %s: %s", proposal.id, type(exc).__name__, exc)
        return False
    return result is True


def activation(proposal: Proposal) -> dict[str, Any]:
    """What the rule reads: the approvals and denials so far (each person's id, kind,
    platform and roles, their kind among them, as the gateway resolved them for the
    workspace), the requester (null when nobody asked), and the mutation (its value as
    edited)."""
    m, asker = proposal.mutation, proposal.requested_by
    return {
        "approvals": [_vote(a) for a in proposal.approvals],
        "denials": [_vote(d) | {"reason": d.reason or ""} for d in proposal.denials],
        "requester": None if asker is None else _person(asker),
        "mutation": {
            "op": m.op.value,
            "key": m.key,
            "value": proposal.current_value,
            "reason": m.reason or "",
            "actor": _person(m.actor),
        },
    }


def _person(actor: Actor) -> dict[str, Any]:
    return {
        "id": actor.id,
        "kind": actor.kind.value,
        "platform": actor.platform,
        "roles": sorted(actor.effective_roles),
    }


def _vote(approval: Approval) -> dict[str, Any]:
    return _person(approval.by) | {"at": approval.at}


_PERSON = {"id": "al", "kind": "user", "platform": "local", "roles": ["user"]}
_SAMPLE: dict[str, Any] = {
    "approvals": [],
    "denials": [],
    "requester": _PERSON,
    "mutation": {"op": "set", "key": "k", "value": "v", "reason": "", "actor": _PERSON},
}
