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
- ``Redactor`` masks by value: where text was derived from values (a message quoting one, a
  template's output, a connector's answer); a value of fewer than ``MIN_INSIDE`` characters
  is struck out only where it stands as a word of its own, so that a secret "42" does not
  eat every 42 in a line, while "42" itself is masked."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from pydantic import JsonValue

from core.gateway.outcome import SECRET, Outcome, Proposal, ProposalStatus
from core.state.commit_result import Rejected
from core.state.mutation import Mutation, Op
from core.state.value_json import dumps

__all__ = ["MIN_INSIDE", "SECRET", "Redactor", "Secrecy", "masked"]

MIN_INSIDE = 4  # a shorter secret is struck out only as a word of its own


def masked(value: JsonValue) -> JsonValue:
    """``value`` as a record other than its entry keeps it (absent stays absent)."""
    return None if value is None else SECRET


def _texts(value: JsonValue) -> set[str]:
    """The ways ``value`` can stand in text: itself (a string), its JSON, its leaves'."""
    if value is None:
        return set()
    found = {value} if isinstance(value, str) else set()
    if isinstance(value, dict):
        for item in value.values():
            found |= _texts(item)
    elif isinstance(value, list):
        for item in value:
            found |= _texts(item)
    elif not isinstance(value, str):
        found.add(dumps(value))
    if not isinstance(value, str):
        found.add(dumps(value))
    else:
        found.add(dumps(value)[1:-1])  # as it stands inside a JSON string (escaped)
        found.add(json.dumps(value)[1:-1])  # the same, with \\u escapes (ASCII-only JSON)
        found.add(repr(value)[1:-1])  # as Python quotes it (an error message may)
    return {t for t in found if t and t.strip() and t != SECRET}


class Redactor:
    """Known secret values struck out of text and JSON data."""

    def __init__(self, values: Iterable[JsonValue] = ()) -> None:
        self.values = [v for v in values if v is not None]
        texts: set[str] = set()
        for value in self.values:
            texts |= _texts(value)
        self.texts = frozenset(texts)
        ordered = sorted(texts, key=len, reverse=True)  # the longest first: no half-masks
        parts = [
            re.escape(t) if len(t) >= MIN_INSIDE else rf"(?<!\w){re.escape(t)}(?!\w)"
            for t in ordered
        ]
        self._pattern = re.compile("|".join(parts)) if parts else None

    def __bool__(self) -> bool:
        return self._pattern is not None

    def within(self, text: str) -> Redactor:
        """Strikes out only the secrets that stand in ``text`` (what a step sent out), in
        any of their forms."""
        return Redactor([v for v in self.values if any(t in text for t in _texts(v))])

    def also(self, values: Iterable[JsonValue]) -> Redactor:
        return Redactor([*self.values, *values])

    def text(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(SECRET, text)

    def json(self, value: Any) -> Any:
        """``value`` (JSON data) with the secrets struck out of every string, keys included;
        a number or a boolean that is one of them is masked whole."""
        if self._pattern is None or value is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bool | int | float):
            return SECRET if dumps(value) in self.texts else value
        if isinstance(value, dict):
            return {self.text(str(k)): self.json(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.json(v) for v in value]
        return self.text(str(value))


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
