"""The Log, Trace and Rules pages of a workspace.

- **Log**: the mutation log, newest first, 50 a page, filtered by key, actor and time
  (``bot.web.log_query``); each row links to its trace.
- **Trace**: one correlation id end to end, or a proposal's whole life, as ``deliberate
  trace`` finds it (``bot.reports.trace.steps_of``), drawn as a timeline: the offset from the
  first step, what the step was, one line, and the step's record under it; above it, the
  proposal's deadlines, and where each change for a while it shows stands now
  (``bot.proposals.deadlines``). What one look may cost is bounded (``bot.web.trace_limits``).
- **Rules**: each rule with its newest evaluations (fired, skipped and why, waiting, cut,
  failed steps), 20 each (``?per_rule=N`` for more, up to what the history keeps).

A ``secret`` key's values are masked on every page."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from flask import Blueprint, abort, render_template, request

from bot.app import App
from bot.proposals.deadlines import deadlines_of, timed_steps
from bot.reports.render import step_label
from bot.reports.trace import describe, steps_of
from bot.web.context import web, workspace_app
from bot.web.formats import MASK
from bot.web.log_query import PAGE, LogFilter, read_page
from bot.web.rate_limits import too_often
from bot.web.trace_limits import MAX_SCAN, TRACE_SCAN
from core.gateway.outcome import ProposalStatus
from core.state.scripts import server_ms
from core.state.streams import stream_ms

__all__ = ["blueprint"]

PER_RULE, MAX_PER_RULE = 20, 500
blueprint = Blueprint("pages", __name__)


@blueprint.get("/w/<workspace>/log")
def log(workspace: str) -> tuple[str, int]:
    app = workspace_app(workspace)
    wanted, problems = LogFilter.parse(request.args)
    history = app.log
    history.skipped = []
    found = read_page(history, wanted)
    rows = [{"r": r, "secret": app.policy.is_secret(r.mutation.key)} for r in found.records]
    args = {k: v for k, v in request.args.items() if k not in ("before", "after") and v}
    return render_template(
        "log.html",
        rows=rows,
        page=found,
        problems=problems,
        wanted=request.args,
        keep=args,
        size=PAGE,
        total=len(history),
        skipped=history.skipped,
    ), (400 if problems else 200)


@blueprint.get("/w/<workspace>/trace/<some_id>")
def trace(workspace: str, some_id: str) -> Any:
    app = workspace_app(workspace)
    if (
        len(some_id) > 128
        or not some_id.isascii()
        or not some_id.replace("-", "").replace("_", "").isalnum()
    ):
        abort(404, description="that is not an id")
    scan = _scan(request.args.get("scan", ""))
    refused = too_often(app.redis, "trace", workspace, web().settings.trace_per_minute)
    if refused is not None:
        return refused
    proposal_id, steps = web().traces.get(
        (workspace, some_id, scan), lambda: steps_of(app, some_id, scan)
    )
    if not steps:
        further = f" (?scan={MAX_SCAN} searches the newest {MAX_SCAN})" if scan < MAX_SCAN else ""
        abort(
            404,
            description=f"nothing has the id {some_id} among the newest {scan} records of "
            f"each log{further}",
        )
    start = steps[0]["ms"]
    shown = [_step(app, step, start) for step in steps]
    proposal = app.gateway.proposals.get(proposal_id) if proposal_id else None
    now = server_ms(app.redis, app.store.keys.versions)
    expired = proposal is not None and proposal.status is ProposalStatus.EXPIRED
    deadlines = [] if proposal is None else deadlines_of(app, proposal, now).named(expired=expired)
    return render_template(
        "trace.html",
        some_id=some_id,
        steps=shown,
        proposal=proposal,
        proposal_id=proposal_id,
        deadlines=deadlines,
        timed=timed_steps(app, steps, now),
    )


def _scan(text: str) -> int:
    """How far back a trace is searched: ``?scan=N``, at most ``MAX_SCAN``."""
    if not text:
        return TRACE_SCAN
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_SCAN:
        abort(400, description=f"scan: a number of records from 1 to {MAX_SCAN}")
    return int(text)


def _step(app: App, step: dict[str, Any], start: int) -> dict[str, Any]:
    data = _masked(app, step["data"])
    masked = {**step, "data": data}
    label = step_label(step["event"], data)
    return {
        "offset": (step["ms"] - start) / 1000,
        "ms": step["ms"],
        "label": label,
        "line": describe(masked),
        "kind": _kind(step["event"], data),
        "record": json.dumps(data, indent=2, ensure_ascii=False, default=str),
    }


def _masked(app: App, data: dict[str, Any]) -> dict[str, Any]:
    """The step with a secret key's values masked (a mutation's, a decision's)."""
    key = data.get("key") or (data.get("mutation") or {}).get("key")
    if not isinstance(key, str) or not app.policy.is_secret(key):
        return data
    out = dict(data)
    for name in ("value", "prev", "latest", "proposedValue"):
        if out.get(name) is not None:
            out[name] = MASK
    if isinstance(out.get("mutation"), dict):
        out["mutation"] = {**out["mutation"], "value": MASK}
    if isinstance(out.get("meta"), dict) and "proposedValue" in out["meta"]:
        out["meta"] = {**out["meta"], "proposedValue": MASK}
    return out


def _kind(event: str, data: dict[str, Any]) -> str:
    if event == "mutation":
        return "committed"
    if event == "decision":
        return {"rejected": "rejected", "committed": "committed"}.get(str(data.get("outcome")), "")
    if event == "rule":
        return "fired" if data.get("fired") else "skipped"
    if event == "rule.action.failed":
        return "failed"
    return ""


@blueprint.get("/w/<workspace>/rules")
def rules(workspace: str) -> str:
    app = workspace_app(workspace)
    text = request.args.get("per_rule", "")
    per_rule = min(int(text), MAX_PER_RULE) if text.isascii() and text.isdigit() else PER_RULE
    keep = app.config.automation.evaluations_kept
    by_rule: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in reversed(app.evaluations.recent(keep)):  # newest first
        name = str(row["data"].get("rule"))
        if len(by_rule[name]) < max(per_rule, 1):
            by_rule[name].append(_evaluation(app, row))
    book = app.rules
    return render_template(
        "rules.html",
        rules=[(r, by_rule.get(r.id, [])) for r in book.rules],
        per_rule=per_rule,
        keep=keep,
    )


def _evaluation(app: App, row: dict[str, Any]) -> dict[str, Any]:
    event, data = row["event"], row["data"]
    outcome = {
        "evaluated": "fired"
        if data.get("fired")
        else "waiting"
        if data.get("waiting")
        else "skipped",
        "action.done": "done",
        "action.failed": "failed",
        "action.retry": "retry",
        "action.skipped": "skipped",
        "cut": "cut",
        "error": "failed",
    }.get(event, event)
    why = data.get("why") or data.get("error") or ""
    step = (
        f"step {int(data.get('step', 0)) + 1} ({data.get('do')})"
        if event.startswith("action.")
        else ""
    )
    return {
        "ms": stream_ms(row["id"]),
        "outcome": outcome,
        "key": row["key"],
        "why": why,
        "step": step,
        "corr": row["corr"],
        "secret": app.policy.is_secret(row["key"]),
    }
