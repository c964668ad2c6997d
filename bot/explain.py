"""How a key came to hold its value: the mutation that set it (actor, reason, the rule that
derived it and that rule's cause) and what rules did with its changes. Shared by
``deliberate rules why`` and the chat adapters' ``why``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.cli.render import json_line, rule_step, rule_verdict
from core.state.mutation import Mutation
from core.state.mutation_log import LogRecord

if TYPE_CHECKING:
    from bot.app import App

__all__ = ["SECRET", "evaluation_line", "origin"]

SECRET = "(secret)"
CAUSE_SCAN = 5000  # how far back the cause of a derived mutation is looked for


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
