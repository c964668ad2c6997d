"""One turn or click, end to end (what ``deliberate trace ID`` and the web's trace page
show): the message, its interpretation,
the beats that fired (and why the others did not), the model calls, and the mutations,
proposals and rejections it led to. When ID is a proposal's (or that of the mutation that
applied one), the proposal's whole life instead: the turn that proposed it, each approval,
edit and refusal, its expiry or discard (with the reason), the commit, the rules it
triggered, and any revert of it."""

from __future__ import annotations

import heapq
import json
import logging
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from bot.app import App
from bot.reports.explain import masked_record
from bot.reports.render import (
    decision_step,
    json_line,
    mutation_step,
    rule_step,
    rule_verdict,
    step_label,
)
from core.state.mutation_log import LogRecord, UnreadableRecord
from core.state.streams import Row, stream_ms
from rules.history import newest_raw_rows, newest_rows

__all__ = ["causal", "collect", "describe", "lifecycle", "line", "steps_of"]


def collect(app: App, correlation_id: str, scan: int = 10_000) -> list[dict[str, Any]]:
    """Every step of one correlation id, from all the logs, in causal order (``causal``)."""
    return _collect(app, [correlation_id], scan)


def _collect(app: App, correlation_ids: Iterable[str], scan: int) -> list[dict[str, Any]]:
    """Every step of each of ``correlation_ids``, as one list in causal order (each log is
    read once, however many ids there are)."""
    ids = set(correlation_ids)
    if not ids:
        return []
    trace = [
        {"id": i, "ms": stream_ms(i), "session": f["session"], "event": f["event"]}
        | {"data": json.loads(f["data"])}
        for i, f in _newest(app, app.trace.keys.trace, scan, "corr", ids, exact=True)
    ]
    history = app.beat_history.keys.beat_history
    beats = [
        {"ms": stream_ms(i), "event": "beats"}
        | {"data": {"session": f["session"]} | json.loads(f["evaluation"])}
        for i, f in _newest(app, history, scan, "correlation_id", ids, exact=True)
    ]
    mutations = [
        # the log entry's own id, as for every other log: the record's ts may be a
        # millisecond older (the script reads the time before it appends)
        {"ms": stream_ms(record.log_id), "event": "mutation", "data": masked_record(app, record)}
        for record in _records(app, scan, ids)
        if record.mutation.correlation_id in ids
    ]
    decisions = [
        {"ms": decision.get("ms", 0), "event": "decision", "data": decision}
        for decision in _decisions(app, scan, ids)
        if decision.get("correlation_id") in ids
    ]
    rules = [
        {
            "ms": row["ms"],
            "event": "rule" if row["event"] == "evaluated" else f"rule.{row['event']}",
            "data": {"key": row["key"], **row["data"]},
        }
        for row in app.evaluations.for_correlations(ids, scan)
    ]
    return causal(trace, mutations, decisions, beats, rules)


def lifecycle(
    app: App, some_id: str, scan: int = 10_000
) -> tuple[str, list[dict[str, Any]]] | None:
    """The proposal ``some_id`` names (its own id, or the id of a mutation that applied it or
    was refused applying it) and every step of its life, in causal order; None when it
    names no proposal. The steps: everything of the turn that proposed it (its correlation
    id, which every decision about it and its commit share), of each click on it and on
    its commit (an "Undo"), and of each revert of its commit."""
    found = _proposal_named(app, some_id, scan)
    if found is None:
        return None
    proposal_id, correlation_id = found
    first = [s for s in _collect(app, [correlation_id], scan) if _about(s, proposal_id)]
    commits = {
        s["data"]["id"]
        for s in first
        if s["event"] == "mutation" and s["data"]["meta"].get("proposal") == proposal_id
    }
    reverts = [
        r.mutation.correlation_id
        for r in _records(app, scan, commits)
        if r.mutation.meta.get("reverts") in commits
    ] + [
        str(row["correlation_id"])
        for row in _decisions(app, scan, commits)
        if row.get("reverts") in commits  # a revert refused
    ]
    clicks = _clicks_on(app, {proposal_id, *commits}, scan)
    later = _collect(app, [*clicks, *reverts], scan)
    steps, seen = [], set()
    for step in causal(first, later):
        line = json_line(step)
        if line in seen:
            continue
        seen.add(line)
        other = step["data"].get("proposal_id") if step["event"] == "decision" else None
        # a revert of its commit that waits for approval is a proposal of its own
        steps.append(step if other in (None, proposal_id) else {**step, "proposal": other})
    return proposal_id, steps


def _proposal_named(app: App, some_id: str, scan: int) -> tuple[str, str] | None:
    """(the proposal's id, its correlation id), as the proposal, the decision log or the
    mutation log has them."""
    proposal = app.gateway.proposals.get(some_id)
    if proposal is not None:
        return proposal.id, proposal.mutation.correlation_id
    for row in reversed(_decisions(app, scan, [some_id])):
        named = row.get("proposal_id")
        if named and some_id in (named, row.get("mutation_id")):
            return str(named), str(row["correlation_id"])
    record = app.log.find(some_id, scan=scan)
    named = None if record is None else record.mutation.meta.get("proposal")
    if record is None or not isinstance(named, str):
        return None
    return named, record.mutation.correlation_id


def _about(step: dict[str, Any], proposal_id: str) -> bool:
    """A step of the proposing turn, unless it concerns another proposal the turn made."""
    data = step["data"]
    if step["event"] == "decision":
        return data.get("proposal_id") in (None, proposal_id)
    if step["event"] == "mutation":
        return data["meta"].get("proposal") in (None, proposal_id)
    return True


def _clicks_on(app: App, targets: set[str], scan: int) -> list[str]:
    """The correlation ids of the clicks on any of ``targets`` (a proposal, a commit)."""
    return [
        f["corr"]
        for _, f in _newest(app, app.trace.keys.trace, scan, "data", targets)
        if f["event"] == "action_clicked" and json.loads(f["data"]).get("target_id") in targets
    ]


# an id of these characters is written as it is in JSON: a record without it is not parsed
_VERBATIM = re.compile(r"[A-Za-z0-9_.:@+=~-]+")


def _newest(
    app: App, stream: str, scan: int, field: str, ids: Iterable[str], *, exact: bool = False
) -> list[Row]:
    """The rows among the newest ``scan`` of ``stream`` whose ``field`` is one of ``ids``
    (``exact``), else may name one: holds one as text (any row may name an id JSON escapes)."""
    needles = set(ids)
    verbatim = all(_VERBATIM.fullmatch(needle) for needle in needles)

    def keep(fields: dict[str, str]) -> bool:
        text = fields.get(field, "")
        return text in needles if exact else not verbatim or any(n in text for n in needles)

    return newest_rows(app.redis, stream, scan if needles else 0, keep)


def _records(app: App, scan: int, ids: Iterable[str]) -> list[LogRecord]:
    """The log's records that may name one of ``ids`` (an unreadable one skipped, logged),
    read as the stream holds them: one that is not UTF-8 is skipped as any other."""
    wanted = set(ids)
    verbatim = all(_VERBATIM.fullmatch(needle) for needle in wanted)
    needles = {needle.encode() for needle in wanted}

    def keep(fields: Mapping[bytes, bytes]) -> bool:
        text = fields.get(b"mutation", b"")
        return not verbatim or any(needle in text for needle in needles)

    records = []
    rows = newest_raw_rows(app.redis, app.log.keys.log, scan if needles else 0, keep)
    for log_id, fields in rows:
        try:
            records.append(LogRecord.from_raw(log_id, fields))
        except UnreadableRecord as exc:
            logging.getLogger("deliberate.store").warning("%s; skipped", exc)
    return records


def _decisions(app: App, scan: int, ids: Iterable[str]) -> list[dict[str, Any]]:
    """The gateway's decisions that may name one of ``ids``, each with its ``ms``."""
    rows = _newest(app, app.gateway.decisions.keys.decisions, scan, "decision", ids)
    return [{"ms": stream_ms(row_id)} | json.loads(fields["decision"]) for row_id, fields in rows]


def causal(*logs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The steps of several logs, each oldest first, as one list: by millisecond, and within
    one millisecond by where each step comes in the handling of a message (``_STAGE``). Each
    log keeps its own order: ids order a stream's entries within a millisecond too, while
    steps of different logs that share one can be told apart only by what causes what."""
    return list(heapq.merge(*logs, key=lambda step: (step["ms"], _stage(step))))


# a message's handling, step by step (core/deliberation/update/loop.py): a turn is said,
# classified (by a model call, perhaps), answered (the model's tool calls may commit or
# propose); a click commits, then its outcome is done; the beats are evaluated last; the
# worker evaluates rules on the committed mutations, and their steps act (a step that
# mutates commits before it is reported done). A proposal waits (a pending decision: it is
# proposed, or approved short of its quorum) before the mutation that applies it commits,
# and the two may share a millisecond
_RULE_ACTIONS = tuple(f"rule.action.{step}" for step in ("done", "failed", "retry", "skipped"))
_STAGE = {
    **dict.fromkeys(("user_said", "action_clicked", "topic_set", "show_requested"), 0),
    **dict.fromkeys(("llm.call", "classified"), 1),
    **dict.fromkeys(("mutation", "decision"), 3),
    **dict.fromkeys(("assistant_replied", "action_done"), 4),
    "beats": 5,
    **dict.fromkeys(("rule", "rule.cut"), 6),
    **dict.fromkeys(_RULE_ACTIONS, 8),
}


def _stage(step: dict[str, Any]) -> int:
    if step["event"] == "decision" and step["data"].get("outcome") == "pending":
        return 2  # a proposal waits: before whatever applies it
    if step["event"] == "mutation" and step["data"]["actor"]["kind"] == "automation":
        return 7  # a rule's step: after the rule fired, before the step is reported done
    return _STAGE.get(step["event"], 9)


def steps_of(app: App, some_id: str, scan: int = 10_000) -> tuple[str | None, list[dict[str, Any]]]:
    """What ``deliberate trace SOME_ID`` shows: the proposal it names (None: it is a
    correlation id) and the steps, in causal order (none: nothing has that id)."""
    named = app.gateway.proposals.get(some_id) is not None
    steps = [] if named else collect(app, some_id, scan)
    life = None if steps else lifecycle(app, some_id, scan)
    return (None, steps) if life is None else life


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%H:%M:%S.%f")[:-3] if ms else "--"


def line(step: dict[str, Any]) -> str:
    """One step as ``deliberate trace`` prints it: its time, its label, what it did."""
    label, of = step_label(step["event"], step["data"]), step.get("proposal")
    about = f"(proposal {of}) " if of and label != "proposed" else ""
    return f"{_when(step['ms'])}  {label:<17} {about}{describe(step)}"


def describe(step: dict[str, Any]) -> str:
    """One step in a line, as ``deliberate trace`` prints it (after its time and label)."""
    return _DESCRIBE.get(step["event"], _generic)(step["data"])


def _generic(data: dict[str, Any]) -> str:
    return json_line(data)[:200]


def _said(data: dict[str, Any]) -> str:
    actor = data["actor"]
    return f"{actor['kind']}:{actor['id']} said {data['text']!r}"


def _classified(data: dict[str, Any]) -> str:
    i = data["interpretation"]
    return (
        f"{i['act_type']} -> {i['target']} ({i['confidence']:.2f}, {data['classifier']}); "
        f"routed as {data['routed']}"
    )


def _beats(data: dict[str, Any]) -> str:
    fired = ", ".join(data["fired"]) or "none"
    idle = [
        c["beat"] + (f" ({c['error']})" if c.get("error") else "")
        for c in data["checks"]
        if not c["held"]
    ]
    return f"fired: {fired}; did not hold: {', '.join(idle) or 'none'}; mode {data['mode']}"


def _llm(data: dict[str, Any]) -> str:
    tokens = f"{data.get('prompt_tokens')}/{data.get('completion_tokens')} tokens"
    error = f" ({data['error']})" if data.get("error") else ""
    return (
        f"{data['purpose']} via {data['model']}: {data['outcome']}{error}, "
        f"{data.get('latency_ms')} ms, {tokens}, "
        f"in {data['input_hash']} out {data.get('output_hash')}"
    )


def _replied(data: dict[str, Any]) -> str:
    out = data["output"]
    candidate = f"; candidate {out['candidate']!r}" if out.get("candidate") else ""
    tools = f"; tools: {', '.join(data['tool_calls'])}" if data.get("tool_calls") else ""
    return f"{data['responder']} ({data['task']}): {out['reply'][:120]!r}{candidate}{tools}"


def _clicked(data: dict[str, Any]) -> str:
    actor = data["actor"]
    return (
        f"{actor['kind']}:{actor['id']} clicked {data['action']} on {data['target_id']} "
        f"v{data['expected_version']} (click {data['click_id']})"
    )


def _done(data: dict[str, Any]) -> str:
    result = data["result"]
    return f"{result['outcome']}: {result['message']}"


def _rule(data: dict[str, Any]) -> str:
    return f"{data['rule']} on {data['key']}: {rule_verdict(data)}"


def _rule_action(data: dict[str, Any]) -> str:
    return f"{data['rule']} {rule_step(data)}"


_DESCRIBE = {
    "user_said": _said,
    "classified": _classified,
    "beats": _beats,
    "llm.call": _llm,
    "assistant_replied": _replied,
    "action_clicked": _clicked,
    "action_done": _done,
    "mutation": mutation_step,
    "decision": decision_step,
    "rule": _rule,
    "rule.cut": _rule,
    **dict.fromkeys(_RULE_ACTIONS, _rule_action),
}
