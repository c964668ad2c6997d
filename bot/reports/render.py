"""How the CLI shows entries, outcomes, log records and the steps of a trace to a person (and
as JSON lines), and what it shows of a secret key's values (``Masking``).

Each line here is one line whatever the people's words in it (``bot.screen.one_line``), and a
JSON line escapes what JSON would leave raw for the terminal to obey (``json_safe``); what
remains is cleaned on its way out (``bot.screen.streams``)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from bot.screen import json_safe, one_line
from core.state.commit_result import Committed, Rejected
from core.state.entry import Entry
from core.state.mutation import revert_id
from core.time_phrases import TimedChange, expiry_phrase, revert_phrase

if TYPE_CHECKING:
    from core.gateway.outcome import Outcome, Proposal
    from core.gateway.secrecy import Secrecy
    from core.state.mutation_log import LogRecord

__all__ = [
    "Masking",
    "decision_step",
    "entry_line",
    "json_line",
    "log_line",
    "mutation_step",
    "outcome_line",
    "reverted_line",
    "rule_step",
    "rule_verdict",
    "step_label",
    "timed_fields",
]


def json_line(data: Any) -> str:
    return json_safe(json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def _value(value: Any) -> str:
    return json_safe(json.dumps(value, ensure_ascii=False))


@dataclass(frozen=True)
class Masking:
    """What the command line shows of the values of secret keys (``is_secret``: the policy's):
    ``(secret)`` in their place, as every other reader shows them, unless ``reveal``
    (``--reveal``: for someone who holds the Redis credentials, and could read them there).
    Each method answers its argument as it is when it shows no secret key's value."""

    is_secret: Callable[[str], bool]
    reveal: bool = False

    @classmethod
    def revealing(cls) -> Masking:
        """Every value shown (``--reveal``): no policy needed to tell which are secret."""
        return cls(lambda _key: False, reveal=True)

    def hides(self, key: str) -> bool:
        return not self.reveal and self.is_secret(key)

    def _secrecy(self) -> Secrecy:
        # the gateway's models, loaded only where a value is hidden (a policy was loaded)
        from core.gateway.secrecy import Secrecy

        return Secrecy(self.is_secret)

    def entry(self, entry: Entry) -> Entry:
        if not self.hides(entry.key):
            return entry
        from core.gateway.secrecy import masked

        meta = _meta(entry.meta)
        return entry.model_copy(update={"value": masked(entry.value), "meta": meta})

    def record(self, record: LogRecord) -> LogRecord:
        """A log record: an ``incr``'s amount stays (a step, not the value)."""
        if not self.hides(record.mutation.key):
            return record
        return replace(record, mutation=self._secrecy().mutation(record.mutation))

    def proposal(self, proposal: Proposal) -> Proposal:
        if not self.hides(proposal.mutation.key):
            return proposal
        return self._secrecy().shown(proposal)

    def outcome(self, outcome: Outcome) -> Outcome:
        """A write's outcome: the value it committed, a conflict's latest entry, a pending
        proposal's value. (A refusal's message is masked by the gateway already.)"""
        if not self.hides(outcome.mutation.key):
            return outcome
        from core.gateway.outcome import SECRET, Pending
        from core.state.value_json import dumps

        secrecy = self._secrecy()
        if isinstance(outcome, Pending):
            return Pending(secrecy.mutation(outcome.mutation), secrecy.shown(outcome.proposal))
        if isinstance(outcome, Rejected):
            latest = None if outcome.latest is None else self.entry(outcome.latest)
            return replace(outcome, mutation=secrecy.mutation(outcome.mutation), latest=latest)
        return Committed(
            secrecy.mutation(outcome.request),
            outcome.version,
            outcome.log_id,
            outcome.ts,
            None if outcome.value_json is None else dumps(SECRET),
            outcome.expires_at,
            _meta(outcome.meta),
            duplicate=outcome.duplicate,
            value_known=outcome.value_known,
        )


def _meta(meta: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """An entry's meta with an edited proposal's value as it was proposed masked."""
    if "proposedValue" not in meta:
        return meta
    from core.gateway.secrecy import masked

    return meta | {"proposedValue": masked(meta["proposedValue"])}


def entry_line(entry: Entry, now_ms: int | None = None, timed: TimedChange | None = None) -> str:
    """One entry; its expiry counted from ``now_ms`` (default: the local clock now);
    ``timed``: the change for a while that set it (when it reverts, by which mutation), or
    the one a timed revert that wrote it undid."""
    line = (
        f"{entry.key} = {_value(entry.value)}  (v{entry.version}, {entry.updated_by}, "
        f"{_when(entry.updated_at)}"
    )
    if entry.expires_at is not None:
        now = time.time() if now_ms is None else now_ms / 1000
        left = max(0.0, entry.expires_at / 1000 - now)
        line += f", expires in {left:.0f}s"
    return one_line(line + ")" + ("" if timed is None else f"; {timed.phrase(now_ms)}"))


def timed_fields(timed: TimedChange | None) -> dict[str, Any]:
    """What an entry's JSON adds when a change for a while set it (``revertsAt``, and the
    mutation that reverts it, ``revertedBy``), or a timed revert wrote it (``revertOf``)."""
    if timed is None:
        return {}
    if timed.state == "reverted":
        return {"revertOf": timed.mutation_id}
    return {"revertsAt": timed.at, "revertedBy": timed.by}


def outcome_line(outcome: Outcome) -> str:
    # the gateway's models, loaded by a write alone (``state get`` starts without them)
    from core.gateway.outcome import Pending

    m = outcome.mutation
    if isinstance(outcome, Committed):
        again = " (already committed: first result returned)" if outcome.duplicate else ""
        if not outcome.value_known:
            return (
                f"committed: {m.key} (v{outcome.version}){again}; the value it set is no "
                "longer on record"
            )
        reverts = outcome.reverts_at
        timed = None if reverts is None else TimedChange(m.id, reverts, revert_id(m.id))
        if outcome.entry is None:
            until = "" if timed is None else f"; {timed.phrase(outcome.ts)}"
            return f"committed: deleted {m.key} (v{outcome.version}){until}{again}"
        return f"committed: {entry_line(outcome.entry, outcome.ts, timed)}{again}"
    if isinstance(outcome, Pending):
        return one_line(
            f"pending: proposal {outcome.proposal.id} ({outcome.proposal.summary()}) "
            "awaits a person with the right role"
        )
    assert isinstance(outcome, Rejected)
    line = one_line(f"rejected ({outcome.reason.value}): {outcome.message}")
    if outcome.latest is not None:
        line += f"\n  latest: {entry_line(outcome.latest)}"
    return line


def reverted_line(mutation_id: str, done: Committed) -> str:
    """What a revert restored: the value the key held before, or its absence."""
    again = " (already reverted: first result returned)" if done.duplicate else ""
    m = done.mutation
    if not done.value_known:
        restored = f"{m.key} (v{done.version}); the value it restored is no longer on record"
    elif done.entry is None:
        restored = f"deleted {m.key} (v{done.version}): it was not set before"
    else:
        restored = f"restored {entry_line(done.entry)}"
    return f"reverted {mutation_id}: {restored}{again}\n  revert mutation {m.id}"


def log_line(record: LogRecord) -> str:
    m = record.mutation
    value = "" if m.value is None else f" {_value(m.value)}"
    extras = []
    if m.expected_version is not None:
        extras.append(f"expected v{m.expected_version}")
    if m.ttl_sec is not None:
        extras.append(f"ttl {m.ttl_sec:g}s")
    reverts = m.reverts_at(record.ts)
    if reverts is not None:
        extras.append(f"for {m.for_sec:g}s, {revert_phrase(reverts, by=revert_id(m.id))}")
    if m.proposed_by is not None:
        extras.append(f"proposed by {m.proposed_by}")
    if m.reason:
        extras.append(f"reason: {m.reason}")
    tail = f"  [{'; '.join(extras)}]" if extras else ""
    return one_line(
        f"{record.log_id}  {_when(record.ts)}  {m.actor}  {m.op.value} {m.key}{value}"
        f"  -> v{record.version}  corr={m.correlation_id}{tail}"
    )


def rule_verdict(data: dict[str, Any]) -> str:
    """A rule evaluation: ``fired: why`` or ``not fired: why``."""
    return f"{'fired' if data.get('fired') else 'not fired'}: {data.get('why')}"


def rule_step(data: dict[str, Any]) -> str:
    """What one step of a rule's run did: ``step N (action): result, error or why``."""
    detail = data.get("error") or data.get("why") or json_line(data.get("result"))[:160]
    return f"step {int(data.get('step', 0)) + 1} ({data.get('do')}): {detail}"


# --- the steps of a trace: a mutation, a gateway decision (a proposal's life) -------------


def step_label(event: str, data: dict[str, Any]) -> str:
    """A step of a proposal's life by what it was (proposed, approved, expired, …)."""
    if event == "mutation":
        meta = data.get("meta") or {}
        return "applied" if meta.get("proposal") else "reverted" if meta.get("reverts") else event
    if event != "decision" or not (data.get("proposal_id") or data.get("reverts")):
        return event
    if data["outcome"] == "pending":
        return "approved" if "approvals" in data else "proposed"
    if data["outcome"] == "rejected":
        return "expired" if data.get("reason") == "expired" else "refused"
    return str(data["outcome"])


def mutation_step(data: dict[str, Any]) -> str:
    actor = data["actor"]
    value = "" if data.get("value") is None else f" {json_line(data['value'])[:120]}"
    line = (
        f"{data['op']} {data['key']}{value} -> v{data['version']} by {actor['kind']}:{actor['id']}"
        f" (log {data['logId']})"
    )
    meta = data.get("meta") or {}
    if meta.get("proposal"):
        line += f"; proposal {meta['proposal']}"
        if meta.get("approvedBy"):
            line += f", approved by {', '.join(str(a) for a in meta['approvedBy'])}"
        if meta.get("editedBy"):
            proposed = json_line(meta.get("proposedValue"))[:120]
            line += f", edited by {meta['editedBy']} (proposed {proposed})"
    if meta.get("reverts"):
        line += f"; {'timed revert of' if meta.get('timed') else 'reverts'} {meta['reverts']}"
    if data.get("revertsAt"):
        line += f"; for a while: {revert_phrase(data['revertsAt'], by=revert_id(data['id']))}"
    return line + f"; mutation {data['id']}"


def decision_step(data: dict[str, Any]) -> str:
    what, actor = f"{data['op']} {data['key']}", data["actor"]
    if data["outcome"] == "pending" and "approvals" in data:
        if data.get("counted") is False:
            return f"{what}: {actor} had approved it already (not counted again); {data['reason']}"
        return f"{what}: {data['reason']}"
    if data["outcome"] == "pending" and data.get("proposal_id"):
        until = f"; {expiry_phrase(data['deadline'])}" if data.get("deadline") else ""
        return f"{what} by {actor} as proposal {data['proposal_id']}: {data['reason']}{until}"
    if data["outcome"] == "rejected" and data.get("proposal_id") and data["reason"] == "expired":
        how = "the worker's sweep" if data.get("clicked") is False else f"a click by {actor}"
        return f"{what} (found by {how}): {data.get('message', '')}"
    if data.get("proposal_id") or data.get("reverts"):  # labelled by what it was (step_label)
        about = f" (revert of {data['reverts']})" if data.get("reverts") else ""
        message = f": {data['message']}" if data.get("message") else ""
        return f"{what} by {actor}{about}: {data['reason']}{message}"
    return f"{data['outcome']} {what} by {actor}: {data['reason']}"
