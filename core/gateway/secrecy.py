"""What is secret, decided in one place, and the masking every writer applies.

A key is secret when the first policy pattern that matches it says ``secret: true``
(``Policy.is_secret``: the only function that decides). A secret key's value is kept in
exactly two places: its entry and its mutation log record (replay rebuilds the entry from
the log), and, while a proposal for it waits for a person, in that proposal (applying it
needs the value; once it is resolved the value is struck out of it).

Everything else that is written down (a refusal, a click's note, a proposal summary, a
rejected idea, a rule's evaluation and the arguments it planned, a step's result or error)
gets the value masked *before* it is written, by the writer, through this module:

- ``Secrecy.value`` and ``Secrecy.mutation`` mask by key: where the record knows the key;
- ``core.redaction.Redactor`` masks by value: where text was derived from values (a message
  quoting one, a template's output, a connector's answer, a person's reason), in every shape
  it knows (blanks run together or split, case-folded, base64), before anything cuts, joins
  or normalises the text; a value of fewer than ``MIN_INSIDE`` characters is struck out only
  where it stands as a word of its own, so that a secret "42" does not eat every 42 in a line,
  while "42" itself is masked."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from pydantic import JsonValue

from core.gateway.outcome import SECRET, Outcome, Proposal, ProposalStatus
from core.redaction import Redactor
from core.state.commit_result import Rejected
from core.state.entry import Entry
from core.state.mutation import Mutation, Op
from core.state.value_json import dumps

__all__ = ["SECRET", "Secrecy", "masked"]


def masked(value: JsonValue) -> JsonValue:
    """``value`` as a record other than its entry keeps it (absent stays absent)."""
    return None if value is None else SECRET


@dataclass(frozen=True)
class Secrecy:
    """The workspace's secret keys (``is_secret``: the policy's) and masking by key."""

    is_secret: Callable[[str], bool]

    def value(self, key: str, value: JsonValue) -> JsonValue:
        return masked(value) if self.is_secret(key) else value

    def values_of(self, mutation: Mutation) -> list[JsonValue]:
        """What of ``mutation`` is a secret value: its value and the value it was proposed
        with, when its key is secret."""
        if not self.is_secret(mutation.key):
            return []
        return [mutation.value, mutation.meta.get("proposedValue")]

    def redactor(self, *mutations: Mutation, values: Iterable[JsonValue] = ()) -> Redactor:
        """Strikes out the secret values of ``mutations`` and ``values``."""
        found: list[JsonValue] = list(values)
        for m in mutations:
            found += self.values_of(m)
        return Redactor(found)

    def held(self, key: str, entry: Callable[[str], Entry | None]) -> JsonValue:
        """The value ``key`` holds now where it is secret (read with ``entry`` only then),
        so that a reason quoting it loses it too; None for any other key."""
        if not self.is_secret(key):
            return None
        now = entry(key)
        return None if now is None else now.value

    def reasoned(self, m: Mutation, entry: Callable[[str], Entry | None]) -> Mutation:
        """``m`` with its secret values (and the value its key holds now, read with ``entry``
        only then) struck out of the reason its writer gave, which is shown wherever its
        record is (``why``, a trace)."""
        if not m.reason or not self.is_secret(m.key):
            return m
        written = [m] if m.op is not Op.INCR else []  # (an increment's amount is a step)
        reason = self.redactor(*written, values=[self.held(m.key, entry)]).text(m.reason)
        return m if reason == m.reason else m.model_copy(update={"reason": reason})

    def mutation(self, m: Mutation) -> Mutation:
        """``m`` as a record other than the entry and the log keeps it. An ``incr``'s amount is
        kept: it is a step, not the value."""
        if not self.is_secret(m.key) or m.op is Op.INCR:
            return m
        meta = dict(m.meta)
        if "proposedValue" in meta:
            meta["proposedValue"] = masked(meta["proposedValue"])
        return m.model_copy(update={"value": masked(m.value), "meta": meta})

    def proposal(self, p: Proposal) -> Proposal:
        """``p`` as it is kept: with its values struck out once nothing can apply it any more
        (it is kept a while, to answer late clicks and to be traced); a waiting one keeps its
        value."""
        return self.shown(p) if _settled(p) else p

    def shown(self, p: Proposal) -> Proposal:
        """``p`` as anything but applying it shows it: its values struck out."""
        if not self.is_secret(p.mutation.key):
            return p
        committed = p.committed
        if committed is not None:
            committed = committed.model_copy(
                update={
                    "mutation": self.mutation(committed.mutation),
                    "value_json": None if committed.value_json is None else dumps(SECRET),
                }
            )
        value = masked(p.value) if p.mutation.op is not Op.INCR else p.value
        return p.model_copy(
            update={"mutation": self.mutation(p.mutation), "value": value, "committed": committed}
        )

    def outcome(self, outcome: Outcome, *more: Mutation) -> Outcome:
        """``outcome`` with no secret value in its message (a refusal quoting the value, or an
        edit of it), whoever reads it: a person, the decision log, a trace."""
        if not isinstance(outcome, Rejected):
            return outcome
        values: list[JsonValue] = []
        latest = outcome.latest
        if latest is not None and self.is_secret(latest.key):
            values.append(latest.value)
        redactor = self.redactor(outcome.mutation, *more, values=values)
        message = redactor.text(outcome.message)
        return outcome if message == outcome.message else replace(outcome, message=message)


def _settled(p: Proposal) -> bool:
    if p.status is ProposalStatus.PENDING:
        return False
    return p.status is not ProposalStatus.APPLIED or p.committed is not None
