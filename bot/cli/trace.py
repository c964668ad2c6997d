"""``deliberate trace ID``: one turn or click, end to end: the message, its interpretation,
the beats that fired (and why the others did not), the model calls, and the mutations,
proposals and rejections it led to. When ID is a proposal's (or that of the mutation that
applied one), the proposal's whole life instead (``bot.reports.trace`` finds the steps)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from bot.app import App
from bot.commands import SUMMARIES
from bot.commands.args import positive_int
from bot.proposals.deadlines import deadlines_of, timed_steps
from bot.reports.explain import proposal_lines
from bot.reports.render import json_line
from bot.reports.trace import line, steps_of
from bot.screen import one_line
from core.state.scripts import server_ms
from core.state.streams import stream_ms

__all__ = ["register"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    trace = commands.add_parser(
        "trace",
        help=SUMMARIES["trace"],
        description="Show everything one turn or click led to, in order: message, "
        "interpretation, beats, model calls, mutations. Given a proposal's id (or the id of "
        "the mutation that applied one), show its whole life in causal order: the turn that "
        "proposed it, each approval, edit and refusal, its expiry or discard (with the "
        "reason), the commit, the rules it triggered, and any revert of it. Exit 1 when "
        "nothing has that id.",
    )
    trace.add_argument(
        "correlation_id", metavar="ID", help="a correlation id, a proposal id or its mutation's"
    )
    trace.add_argument("--json", action="store_true", help="one JSON object per step")
    trace.add_argument(
        "--scan",
        type=positive_int,
        default=10_000,
        metavar="N",
        help="how many of the newest records of each log to search (default 10000)",
    )
    trace.set_defaults(handler=_trace)


def _trace(app: App, args: argparse.Namespace) -> int:
    some_id, scan = args.correlation_id, args.scan
    proposal_id, steps = steps_of(app, some_id, scan)
    mark = app.log.compacted()
    if proposal_id is not None:
        _header(app, proposal_id, steps, args.json)
    if not steps:
        gone = "" if mark is None else f"; {mark}"
        print(f"nothing has correlation id {one_line(some_id)} (among the newest {scan})" + gone)
        return 1
    for step in steps:
        print(json_line(step) if args.json else one_line(line(step)))
    now = server_ms(app.redis, app.store.keys.versions)
    for said in [] if args.json else timed_steps(app, steps, now):
        print(one_line(f"now: {said}"))
    if mark is not None and steps[0]["ms"] <= stream_ms(mark.through):
        print(f"note: mutations of this trace may be gone from the log: {mark}", file=sys.stderr)
    return 0


def _header(app: App, proposal_id: str, steps: list[dict[str, Any]], as_json: bool) -> None:
    """What the proposal is now, with its deadlines, before the steps of its life."""
    proposal = app.gateway.proposals.get(proposal_id)
    if proposal is None:
        data: dict[str, Any] = {"id": proposal_id}
        said = f"proposal {proposal_id}: no longer kept; its steps, as the logs still hold them:"
    else:
        deadlines = deadlines_of(app, proposal, server_ms(app.redis, app.store.keys.versions))
        shown = app.gateway.secrecy.shown(proposal)  # a trace masks a secret key's values
        data = shown.model_dump(mode="json", by_alias=True) | deadlines.to_dict()
        said = "proposal " + "\n".join(map(one_line, proposal_lines(app.policy, shown, deadlines)))
    ms = steps[0]["ms"] if steps else 0
    print(json_line({"ms": ms, "event": "proposal", "data": data}) if as_json else said)
