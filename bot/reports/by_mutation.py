"""What rules made of a key's changes, one change at a time: the rule evaluations and actions
that ``why`` shows, grouped under the mutation that triggered them, newest first, each headed
by its version, who made it and when. Shared by ``deliberate why`` and the chat's ``why``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bot.reports.explain import CAUSE_SCAN, evaluation_line
from core.state.mutation_log import LogRecord, MutationLog
from core.state.streams import id_order

__all__ = ["Triggered", "by_mutation", "grouped_lines"]

_LOG_ID = re.compile(r"^\d{1,20}-\d{1,20}$")
_WHEN = "%Y-%m-%d %H:%M:%SZ"


@dataclass(frozen=True)
class Triggered:
    """The evaluations and actions (``rows``, oldest first) of one mutation: ``record`` is its
    log record, None when the log no longer holds it (compacted) or it cannot be told."""

    mutation_id: str | None
    record: LogRecord | None
    rows: list[dict[str, Any]]

    @property
    def heading(self) -> str:
        r = self.record
        if r is None:
            named = f"mutation {self.mutation_id}" if self.mutation_id else "a mutation"
            return f"{named} (no longer in the log)"
        when = datetime.fromtimestamp(r.ts / 1000, UTC).strftime(_WHEN)
        m = r.mutation
        return f"v{r.version} {m.op.value} by {m.actor} at {when}, mutation {m.id}"

    def to_dict(self) -> dict[str, Any]:
        r = self.record
        return {
            "mutationId": self.mutation_id,
            "logId": None if r is None else r.log_id,
            "version": None if r is None else r.version,
            "op": None if r is None else r.mutation.op.value,
            "actor": None if r is None else str(r.mutation.actor),
            "ts": None if r is None else r.ts,
            "evaluations": self.rows,
        }


def by_mutation(log: MutationLog, rows: list[dict[str, Any]]) -> list[Triggered]:
    """``rows`` (the rules' records about one key, oldest first) by the mutation each is
    about, newest mutation first. A record names its mutation's id (an action's too) and the
    evaluation its log id; a failed run names neither, and goes with its correlation's."""
    by_corr = {row["corr"]: _field(row, "mutationId") for row in rows if _field(row, "mutationId")}
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        name = _field(row, "mutationId") or by_corr.get(row["corr"]) or f"corr:{row['corr']}"
        groups.setdefault(name, []).append(row)
    found = [_triggered(log, name, members) for name, members in groups.items()]
    return sorted(found, key=_newest_first)


def grouped_lines(groups: list[Triggered]) -> list[str]:
    """Each mutation's heading, then its evaluations and actions beneath it (indented, each
    a line of its own: a printer shows people's words in them with ``one_line``)."""
    lines = []
    for group in groups:
        lines.append(f"  {group.heading}:")
        lines.extend(f"    {evaluation_line(row)}" for row in group.rows)
    return lines


def _triggered(log: MutationLog, name: str, rows: list[dict[str, Any]]) -> Triggered:
    mutation_id = None if name.startswith("corr:") else name
    record = None
    for log_id in dict.fromkeys(_field(row, "logId") for row in rows):
        if log_id and _LOG_ID.match(log_id):  # (a planted row may say anything)
            record = log.get(log_id)
            if record is not None and mutation_id in (None, record.mutation.id):
                break
            record = None
    if record is None and mutation_id is not None:
        record = log.find(mutation_id, scan=CAUSE_SCAN)
    if record is not None and mutation_id is None:
        mutation_id = record.mutation.id
    return Triggered(mutation_id, record, rows)


def _newest_first(group: Triggered) -> tuple[int, int, int]:
    """By the mutation's version; those no longer in the log after, by their newest row."""
    if group.record is not None:
        return (0, -group.record.version, 0)
    ms, seq = max(id_order(str(row["id"])) for row in group.rows)
    return (1, -ms, -seq)


def _field(row: dict[str, Any], name: str) -> str | None:
    data = row.get("data")
    value = data.get(name) if isinstance(data, dict) else None
    return value if isinstance(value, str) and value else None
