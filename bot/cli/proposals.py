"""``deliberate proposals``: what waits for people, and what became of the rest, and the
break-glass changes awaiting review. Deciding one (``approve|reject|breakglass ID``) is
``bot.cli.approvals``. A module of its own so that ``state get`` loads none of it."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from bot.cli import approvals
from bot.commands import SUMMARIES
from bot.commands.args import actor, add_reveal, masking, positive_int
from bot.reports.render import json_line
from bot.screen import one_line
from core.state.scripts import server_ms

if TYPE_CHECKING:
    from bot.app import App

__all__ = ["register"]

EXIT_OK, EXIT_REJECTED, EXIT_USAGE = 0, 1, 2


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    proposals = commands.add_parser(
        "proposals",
        help=SUMMARIES["proposals"],
        description="List the pending proposals, soonest deadline first: each one's id, what "
        "it would do, who proposed it and for whom, how long ago, its deadline (UTC), its "
        "approvals so far of the number it needs, four eyes (the person who asked may not "
        "approve it), and whom it awaits (the key's writers; moderator or admin if it is "
        "protected). Apply, edit or discard one with its buttons in the conversation, in "
        "the web Inbox, or here: 'deliberate proposals approve|reject|breakglass ID' (each "
        "with --help); 'deliberate trace ID' shows one proposal's whole life.",
    )
    approvals.register(proposals)
    proposals.add_argument(
        "--all",
        action="store_true",
        help="also those applied, discarded, expired or gone stale, while they are kept (a "
        "week after they were resolved): who resolved each, when, and why",
    )
    proposals.add_argument(
        "--limit",
        type=positive_int,
        default=200,
        metavar="N",
        help="at most N proposals (default 200)",
    )
    proposals.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per proposal, as stored, with 'awaits' on a pending one",
    )
    add_reveal(proposals)
    proposals.add_argument(
        "--break-glass",
        action="store_true",
        help="list the break-glass changes (applied at once by a role, with a reason) not yet "
        "reviewed, oldest first (with --all: the reviewed ones too)",
    )
    proposals.add_argument(
        "--reviewed",
        metavar="MUTATION_ID",
        help="mark the break-glass change MUTATION_ID reviewed, by --actor (not the person "
        "who broke the glass); exit 1 when refused",
    )
    proposals.add_argument("--actor", type=actor, metavar="KIND:ID", help="who reviews")
    proposals.set_defaults(handler=_proposals)


def _proposals(app: App, args: argparse.Namespace) -> int:
    from bot.proposals.deadlines import deadlines_of
    from bot.reports.explain import awaiting, proposal_lines
    from core.gateway.outcome import ProposalStatus

    if args.break_glass or args.reviewed:
        return _break_glass(app, args)
    box, hide = app.gateway.proposals, masking(args, app.policy)
    found = box.listed(resolved=args.all, limit=args.limit)
    now = server_ms(app.redis, app.store.keys.versions)
    if args.json:
        for p in found:
            data = hide.proposal(p).model_dump(mode="json", by_alias=True)
            data |= deadlines_of(app, p, now).to_dict()
            if p.status is ProposalStatus.PENDING:
                data["awaits"] = awaiting(app.policy, p).to_dict()
            print(json_line(data))
        return EXIT_OK
    if not found:
        print("no proposals are kept" if args.all else "no proposal waits for anyone")
        return EXIT_OK
    lines = (proposal_lines(app.policy, hide.proposal(p), deadlines_of(app, p, now)) for p in found)
    print("\n\n".join("\n".join(map(one_line, each)) for each in lines))  # a blank line between
    return EXIT_OK


def _break_glass(app: App, args: argparse.Namespace) -> int:
    from core.gateway.break_glass import BreakGlass, ReviewRefused

    glass = BreakGlass(app.gateway)
    if args.reviewed:
        if args.actor is None:
            print("deliberate: --reviewed needs --actor KIND:ID", file=sys.stderr)
            return EXIT_USAGE
        try:
            done = glass.review(args.reviewed, args.actor)
        except ReviewRefused as exc:
            print(f"not reviewed: {exc}", file=sys.stderr)
            return EXIT_REJECTED
        print(json_line(done) if args.json else f"reviewed {args.reviewed} ({done['reviewedBy']})")
        return EXIT_OK
    found = glass.listed(reviewed=args.all)
    for r in found:
        by = f"{r['by']['kind']}:{r['by']['id']}"
        seen = f"; reviewed by {r['reviewedBy']}" if "reviewedBy" in r else ""
        line = f"{r['mutationId']}  {r['op']} {r['key']} (v{r['version']}) by {by}: {r['reason']}"
        print(json_line(r) if args.json else one_line(line + seen))
    if not found and not args.json:
        print("no break-glass change awaits review")
    return EXIT_OK
