"""``deliberate revert``: undo a committed mutation with a new one, through the gateway."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bot.commands import SUMMARIES
from bot.commands.args import actor, add_reveal, masking, positive_int
from bot.reports.render import entry_line, json_line, outcome_line, reverted_line
from bot.screen import one_line
from core.state.commit_result import Committed, Rejected, RejectReason

if TYPE_CHECKING:
    from bot.app import App

__all__ = ["register"]

EXIT_OK, EXIT_REJECTED = 0, 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    revert = commands.add_parser(
        "revert",
        help=SUMMARIES["revert"],
        description="Undo the committed mutation MUTATION_ID (see 'deliberate log --json') "
        "with a new one that writes back the value its key held before (or deletes the key, "
        "if it was not set), through the gateway: the actor's roles are checked, the log "
        "keeps both, and where the key's writes need approval the revert waits as a "
        "proposal. Refused (exit 1) when the key changed since, when the log no longer "
        "holds the mutation or the value before it, or when the actor is not a person. "
        "Asked again, it answers its first result and commits nothing.",
    )
    revert.add_argument("mutation_id", metavar="MUTATION_ID")
    revert.add_argument(
        "--actor",
        "--as",
        dest="actor",
        type=actor,
        required=True,
        metavar="KIND:ID",
        help="the person who reverts: user, moderator or admin, e.g. user:alice",
    )
    revert.add_argument(
        "--scan",
        type=positive_int,
        metavar="N",
        help="look for the mutation among the newest N log records only (default: all)",
    )
    revert.add_argument("--json", action="store_true", help="print the outcome as JSON")
    add_reveal(revert)
    revert.set_defaults(handler=_revert)


def _revert(app: App, args: argparse.Namespace) -> int:
    from core.gateway.outcome import Pending
    from core.gateway.reverts import Revert, revert

    hide, asked = masking(args, app.policy), Revert(args.mutation_id, args.actor, scan=args.scan)
    outcome = hide.outcome(revert(app.gateway, asked))
    if args.json:
        print(json_line(outcome.to_dict()))
    elif isinstance(outcome, Committed):
        print(reverted_line(args.mutation_id, outcome))
    elif isinstance(outcome, Pending):
        print(outcome_line(outcome))
    else:
        print(one_line(f"not reverted ({outcome.reason.value}): {outcome.message}"))
        moved = outcome.reason is RejectReason.CONFLICT
        now = app.store.get(outcome.mutation.key) if moved else None
        if now is not None:
            print(f"  now: {entry_line(hide.entry(now))}")
    return EXIT_REJECTED if isinstance(outcome, Rejected) else EXIT_OK
