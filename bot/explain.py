"""How a key came to hold its value: the mutation that set it (actor, reason, the rule that
derived it and that rule's cause) and what rules did with its changes. Shared by
``deliberate rules why`` and the chat adapters' ``why``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bot.cli.render import json_line, rule_step, rule_verdict
from core.state.mutation import Mutation
from core.state.mutation_log import KeyHistory, LogRecord

if TYPE_CHECKING:
    from bot.app import App

__all__ = ["SECRET", "evaluation_line", "last_change", "origin", "unsearched"]

SECRET = "(secret)"
CAUSE_SCAN = 5000  # how far back the cause of a derived mutation is looked for
_WHEN = "%Y-%m-%d %H:%M:%SZ"


def origin(app: App, record: LogRecord, *, reveal: bool = True) -> str:
    """The mutation behind ``record``'s key; ``reveal=False`` hides its value."""
    m = record.mutation
    shown = json_line(m.value)[:120] if reveal else SECRET
    value = "" if m.value is None else f" {shown}"
    line = f"{m.key}: {m.op.value}{value} -> v{record.version} by {m.actor}"
    if m.reason:
        line += f", reason: {m.reason}"
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
            line += f", reason: {entry.meta['reason']}"
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
