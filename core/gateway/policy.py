"""Policy: which keys may be written, with what values, by whom, how often.

Key rules match by glob pattern, the first matching rule in file order wins, and a key that no
rule matches is denied. ``Policy.check`` is pure: it never reads state (the rate limit is
enforced by the commit script, atomically with the write it counts).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.gateway.approval_rule import ApprovalRule, BreakGlassRule, TellRule
from core.gateway.value_schema import ValueSchema, ValueType
from core.state.actor import Actor, ActorKind
from core.state.commit_result import RejectReason
from core.state.entry import Entry
from core.state.limits import NO_LIMITS, CommitLimits, RateLimit
from core.state.mutation import MAX_TTL_SEC, Mutation, Op
from core.state.value_json import MAX_BYTES

__all__ = [
    "ApprovalRule",
    "BreakGlassRule",
    "GuestPolicy",
    "KeyRule",
    "Policy",
    "PolicyConfig",
    "ProposalsPolicy",
    "TellRule",
    "UndoPolicy",
    "Verdict",
    "VerdictKind",
]

_PATTERN = re.compile(r"^[A-Za-z0-9_.:\-*?\[\]!]{1,200}$")
_PRIVILEGED = frozenset({ActorKind.MODERATOR.value, ActorKind.ADMIN.value})
_RULE_CACHE_SIZE = 10_000
DEFAULT_WRITERS = ("user", "moderator", "admin", "automation", "system")


class RateLimitRule(BaseModel):
    """At most ``max`` commits per actor and key in any window of ``per_sec`` seconds."""

    model_config = ConfigDict(extra="forbid")

    max: int = Field(ge=1, le=1_000_000)
    per_sec: float = Field(gt=0, le=MAX_TTL_SEC, allow_inf_nan=False)


class TtlRule(BaseModel):
    """``default_sec`` applies when a mutation names no ttl; ``max_sec`` caps the ttl."""

    model_config = ConfigDict(extra="forbid")

    default_sec: float | None = Field(default=None, gt=0, le=MAX_TTL_SEC, allow_inf_nan=False)
    max_sec: float | None = Field(default=None, gt=0, le=MAX_TTL_SEC, allow_inf_nan=False)

    @model_validator(mode="after")
    def _default_within_max(self) -> Self:
        if self.default_sec and self.max_sec and self.default_sec > self.max_sec:
            raise ValueError(
                f"default_sec {self.default_sec:g} is more than max_sec {self.max_sec:g}"
            )
        return self


class KeyRule(ValueSchema):
    """``writers``: roles (actor kinds count as roles) that may write; ``protected``: only
    moderator or admin, whatever ``writers`` says; ``agent``: what an agent may do;
    ``approval``: how its proposals are approved (one person, by default);
    ``revert_after_sec``: a change to the key lasts this long, then reverts by itself,
    unless it names its own time (``for_sec``; a revert is never timed)."""

    pattern: str
    description: str = ""
    writers: list[str] = Field(default_factory=lambda: list(DEFAULT_WRITERS))
    protected: bool = False
    agent: Literal["deny", "propose", "commit"] = "propose"
    secret: bool = False
    rate_limit: RateLimitRule | None = None
    ttl: TtlRule | None = None
    revert_after_sec: float | None = Field(default=None, gt=0, le=MAX_TTL_SEC, allow_inf_nan=False)
    approval: ApprovalRule = ApprovalRule()

    @model_validator(mode="after")
    def _pattern_is_glob(self) -> Self:
        if not _PATTERN.match(self.pattern):
            raise ValueError(f"pattern {self.pattern!r} has characters no state key can have")
        return self

    @cached_property
    def writer_set(self) -> frozenset[str]:
        return frozenset(self.writers)

    def commit_limits(self, max_value_bytes: int) -> CommitLimits:
        """The checks that depend on the stored value, as the commit script makes them: an
        append's result is only known there."""
        limit = self.rate_limit
        rate = RateLimit(limit.max, round(limit.per_sec * 1000)) if limit else None
        lists = self.type in (ValueType.ARRAY, ValueType.ANY)
        return CommitLimits(rate, max_value_bytes, (self.max_length or 0) if lists else 0)

    def matches(self, key: str) -> bool:
        return fnmatch.fnmatchcase(key, self.pattern)


class GuestPolicy(BaseModel):
    """What a guest (a Slack user of another organisation in a shared channel; a Discord
    member without a bound role where the server says ``members: talk``) may do besides
    talking: commit (click a button that writes, as a user would), apply or discard an
    agent's proposal, read the state with ``/deliberate``."""

    model_config = ConfigDict(extra="forbid")

    commit: bool = False
    apply: bool = False
    read: bool = False


class ProposalsPolicy(BaseModel):
    """``expire_after_sec``: an agent's proposal nobody applied this long expires, and can no
    longer be applied (fail-closed); ``tell``: how the person who asked hears of each change
    (in the thread; by a direct message too), unless the key's ``approval.tell`` says."""

    model_config = ConfigDict(extra="forbid")

    expire_after_sec: int = Field(default=86_400, ge=60, le=30 * 86_400)
    tell: TellRule = TellRule()


class UndoPolicy(BaseModel):
    """``window_sec``: how long an "Undo" button is offered under what a click committed (0:
    never; ``deliberate revert`` reverts at any time)."""

    model_config = ConfigDict(extra="forbid")

    window_sec: int = Field(default=600, ge=0, le=7 * 86_400)


class PolicyConfig(BaseModel):
    """``break_glass``: who may break the glass on every key whose pattern's approval names
    no ``break_glass`` of its own."""

    model_config = ConfigDict(extra="forbid")

    max_value_bytes: int = Field(default=16_384, ge=16, le=MAX_BYTES)
    guests: GuestPolicy = GuestPolicy()
    proposals: ProposalsPolicy = ProposalsPolicy()
    undo: UndoPolicy = UndoPolicy()
    break_glass: BreakGlassRule | None = None
    keys: list[KeyRule] = []


class VerdictKind(StrEnum):
    COMMIT = "commit"
    PROPOSE = "propose"
    REJECT = "reject"


@dataclass(slots=True)
class Verdict:
    kind: VerdictKind
    mutation: Mutation  # with the rule's default ttl applied
    rule: KeyRule | None = None
    reason: RejectReason | None = None
    message: str = ""
    limits: CommitLimits = NO_LIMITS  # what the commit script must still check


class Policy:
    def __init__(self, config: PolicyConfig) -> None:
        self.config = config
        self._rules: dict[str, KeyRule | None] = {}
        self._limits = {id(r): r.commit_limits(config.max_value_bytes) for r in config.keys}

    def rule_for(self, key: str) -> KeyRule | None:
        if key not in self._rules:
            if len(self._rules) >= _RULE_CACHE_SIZE:
                self._rules.clear()
            self._rules[key] = next((r for r in self.config.keys if r.matches(key)), None)
        return self._rules[key]

    def approval(self, key: str) -> ApprovalRule:
        """How proposals for ``key`` are approved (one person, when no rule matches)."""
        rule = self.rule_for(key)
        return ApprovalRule() if rule is None else rule.approval

    def break_glass(self, key: str) -> BreakGlassRule | None:
        """Who may break the glass on ``key``: its pattern's, else the policy's (None: nobody;
        a key no pattern allows: nobody either)."""
        rule = self.rule_for(key)
        if rule is None:
            return None
        return rule.approval.break_glass or self.config.break_glass

    def expire_after_ms(self, key: str) -> int:
        """How long a proposal for ``key`` may wait to be applied."""
        own = self.approval(key).expire_after_sec
        return (self.config.proposals.expire_after_sec if own is None else own) * 1000

    def tell(self, key: str) -> TellRule:
        """How the requester of a change to ``key`` is told of it: its pattern's
        ``approval.tell`` (all of it), else the policy's ``proposals.tell``."""
        return self.approval(key).tell or self.config.proposals.tell

    def is_secret(self, key: str) -> bool:
        rule = self.rule_for(key)
        return rule is not None and rule.secret

    def refuse_deciding(
        self, actor: Actor, key: str, verb: str = "discard"
    ) -> tuple[RejectReason, str] | None:
        """Why the person ``actor`` may not ``verb`` (apply or discard) a proposal for
        ``key``, or None when they may. Deciding a proposal takes the right to write its
        key, as applying it checks: the key's writers (a tenant's role bindings are among
        the actor's roles), a protected key's moderator or admin, a guest only where
        ``guests.apply`` says. No pattern allows the key: nobody may."""
        rule = self.rule_for(key)
        if rule is None:
            return RejectReason.NOT_ALLOWED, (
                f"no policy pattern allows the key {key}: nobody may {verb} a proposal for it "
                "(it expires by itself)"
            )
        return _person_refused(rule, actor, key, self.config.guests, verb)

    def visible_to_agent(self, entries: list[Entry]) -> list[Entry]:
        """Entries an agent (the model) may see: never a ``secret`` key."""
        return [e for e in entries if not self.is_secret(e.key)]

    def check(self, mutation: Mutation) -> Verdict:
        rule = self.rule_for(mutation.key)
        if rule is None:
            return _reject(
                mutation,
                RejectReason.NOT_ALLOWED,
                f"no policy pattern allows the key {mutation.key}",
            )
        mutation, problem = _with_ttl(rule, mutation)
        if rule.revert_after_sec and mutation.for_sec is None and "reverts" not in mutation.meta:
            mutation = mutation.with_changes(for_sec=rule.revert_after_sec)
        problem = problem or self._value_problem(rule, mutation)
        if problem:
            return _reject(mutation, RejectReason.SCHEMA, f"{mutation.key}: {problem}", rule)
        verdict = _authorize(rule, mutation, self.config.guests)
        verdict.limits = self._limits[id(rule)]
        return verdict

    def _value_problem(self, rule: KeyRule, mutation: Mutation) -> str | None:
        if mutation.op is Op.DELETE:
            return None
        size = len(mutation.value_json.encode())
        if size > self.config.max_value_bytes:
            return f"value is {size} bytes, more than the {self.config.max_value_bytes} allowed"
        secret = self.is_secret(mutation.key)
        if mutation.op is Op.SET:
            return rule.check(mutation.value, secret=secret)
        if mutation.op is Op.APPEND:
            return rule.check_item(mutation.value, secret=secret)
        return rule.check_delta(mutation.value, secret=secret)


def _reject(
    mutation: Mutation, reason: RejectReason, message: str, rule: KeyRule | None = None
) -> Verdict:
    return Verdict(VerdictKind.REJECT, mutation, rule, reason, message)


def _with_ttl(rule: KeyRule, mutation: Mutation) -> tuple[Mutation, str | None]:
    """The mutation with the rule's default ttl when it names none; a problem when its ttl
    breaks the maximum, or when it has none under a maximum without a default (kept for
    ever otherwise: ``set`` clears an expiry, and ``append`` or ``incr`` would create the key
    without one)."""
    ttl = rule.ttl
    if ttl is None or mutation.op is Op.DELETE:
        return mutation, None
    if mutation.ttl_sec is None and ttl.default_sec is not None:
        mutation = mutation.with_changes(ttl_sec=ttl.default_sec)
    if ttl.max_sec is None:
        return mutation, None
    if mutation.ttl_sec is None:
        return mutation, f"needs a ttl of at most {ttl.max_sec:g}s (the pattern has no default)"
    if mutation.ttl_sec > ttl.max_sec:
        return mutation, f"ttl {mutation.ttl_sec:g}s is more than the {ttl.max_sec:g}s allowed"
    return mutation, None


def _authorize(rule: KeyRule, mutation: Mutation, guests: GuestPolicy) -> Verdict:
    actor: Actor = mutation.actor
    if actor.kind is ActorKind.AGENT:
        if rule.agent == "deny":
            return _reject(
                mutation,
                RejectReason.AGENT_DENIED,
                f"agents may not propose changes to {mutation.key}",
                rule,
            )
        if rule.agent == "commit" and not rule.protected:
            return Verdict(VerdictKind.COMMIT, mutation, rule)
        return Verdict(VerdictKind.PROPOSE, mutation, rule)
    applying = mutation.proposed_by is not None  # an agent's proposal, applied
    refused = _person_refused(rule, actor, mutation.key, guests, "apply" if applying else None)
    if refused is not None:
        return _reject(mutation, *refused, rule)
    if rule.approval.people and mutation.proposed_by is None and actor.is_person:
        return Verdict(VerdictKind.PROPOSE, mutation, rule)  # allowed to ask, not to decide
    return Verdict(VerdictKind.COMMIT, mutation, rule)


def _person_refused(
    rule: KeyRule, actor: Actor, key: str, guests: GuestPolicy, deciding: str | None
) -> tuple[RejectReason, str] | None:
    """Why ``actor`` may not write ``key`` under ``rule`` (``deciding``: "apply" or
    "discard", as they decide a proposal for it), or None: a guest only where ``guests``
    lets them (then as a user), a protected key a moderator or an admin, else the rule's
    writers."""
    roles = actor.effective_roles
    if actor.kind is ActorKind.GUEST:
        if not (guests.apply if deciding else guests.commit):
            what = f"{deciding} proposals" if deciding else f"change {key}"
            return RejectReason.FORBIDDEN, f"{actor} is a guest here: guests may talk, not {what}"
        roles = roles | {ActorKind.USER.value}  # allowed: a guest writes as a user would
    discarding = deciding == "discard"
    if rule.protected and roles.isdisjoint(_PRIVILEGED):
        if discarding:
            return RejectReason.PROTECTED, (
                f"{key} is protected: only a moderator or an admin may discard a proposal "
                "to change it"
            )
        return RejectReason.PROTECTED, (
            f"{key} is protected: only a moderator or an admin may change it"
        )
    if roles.isdisjoint(rule.writer_set):
        writers = ", ".join(rule.writers)
        if discarding:
            return RejectReason.FORBIDDEN, (
                f"{actor} may not discard a proposal to change {key}: only those who may "
                f"write it may (writers: {writers})"
            )
        return RejectReason.FORBIDDEN, f"{actor} may not write {key} (writers: {writers})"
    return None
