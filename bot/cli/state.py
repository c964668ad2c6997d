"""``deliberate state get|list|set|incr|delete``: every write goes through the gateway."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from bot.cli.args import actor, json_or_text, state_key
from bot.cli.render import entry_line, json_line, outcome_line
from bot.redis_connection import connect
from core.state.codec import UnreadableEntry
from core.state.commit_result import Rejected
from core.state.mutation import Mutation, Op
from core.state.store import StateStore

if TYPE_CHECKING:
    from bot.app import App
    from core.gateway.outcome import Outcome

__all__ = ["register"]

EXIT_OK, EXIT_REJECTED = 0, 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    state = commands.add_parser(
        "state",
        help="read and write canonical state",
        description="Read canonical state, or change it through the "
        "mutation gateway (policy applies to every write).",
    )
    sub = state.add_subparsers(dest="state_command", required=True, metavar="COMMAND")

    get = sub.add_parser("get", help="show one key", description="Show the live entry of KEY.")
    get.add_argument("key", type=state_key)
    get.add_argument("--json", action="store_true", help="print the entry as JSON")
    get.set_defaults(handler=_get, standalone=True)  # the store alone: no config to load

    lst = sub.add_parser(
        "list",
        help="list keys by prefix",
        description="List live entries whose key starts with PREFIX.",
    )
    lst.add_argument("prefix", nargs="?", default="")
    lst.add_argument("--json", action="store_true", help="one JSON object per line")
    lst.set_defaults(handler=_list)

    put = sub.add_parser(
        "set",
        help="set a key",
        description="Set KEY to VALUE (parsed as JSON when it parses, else taken as a string).",
    )
    put.add_argument("key", type=state_key)
    put.add_argument("value", type=json_or_text)
    put.add_argument("--ttl", type=float, metavar="S", help="expire after S seconds")
    put.set_defaults(handler=_write, op=Op.SET)

    incr = sub.add_parser(
        "incr", help="add to a number", description="Add BY (default 1) to the number at KEY."
    )
    incr.add_argument("key", type=state_key)
    incr.add_argument("--by", type=json_or_text, default=1, metavar="N", help="amount to add")
    incr.set_defaults(handler=_write, op=Op.INCR)

    delete = sub.add_parser("delete", help="delete a key", description="Delete KEY.")
    delete.add_argument("key", type=state_key)
    delete.set_defaults(handler=_write, op=Op.DELETE)

    for writer in (put, incr, delete):
        writer.add_argument(
            "--actor",
            type=actor,
            required=True,
            metavar="KIND:ID",
            help="who writes: user, moderator, admin, agent, automation, "
            "connector or system, e.g. user:alice",
        )
        writer.add_argument(
            "--expected-version",
            type=int,
            metavar="N",
            help="commit only if the key is at version N (0: not yet set)",
        )
        writer.add_argument("--reason", default="", help="why, kept in the log")
        writer.add_argument(
            "--id",
            metavar="ID",
            help="the mutation id (default: a new one); a change sent again with the same id "
            "is applied once, e.g. after Redis did not confirm it",
        )
        writer.add_argument("--json", action="store_true", help="print the outcome as JSON")


def _get(args: argparse.Namespace) -> int:
    store = StateStore(connect(args.redis_url), args.workspace)  # a read: no store settings
    try:
        entry = store.get(args.key)
    except UnreadableEntry as exc:
        print(f"deliberate: {exc}", file=sys.stderr)
        return EXIT_REJECTED
    if entry is None:
        version = store.version(args.key)
        message = f"{args.key} is not set" + (f" (last version {version})" if version else "")
        if args.json:
            print(json_line({"key": args.key, "found": False, "version": version}))
        else:
            print(message)
        return EXIT_REJECTED
    print(
        json_line(entry.model_dump(mode="json", by_alias=True)) if args.json else entry_line(entry)
    )
    return EXIT_OK


def _list(app: App, args: argparse.Namespace) -> int:
    skipped: list[UnreadableEntry] = []
    entries = app.store.entries(args.prefix, skipped)
    for entry in entries:
        print(
            json_line(entry.model_dump(mode="json", by_alias=True))
            if args.json
            else entry_line(entry)
        )
    for unreadable in skipped:  # never a silent gap; the others are still shown
        print(f"deliberate state: skipped {unreadable.key}: {unreadable.why}", file=sys.stderr)
    if not entries and not skipped and not args.json:
        print(f"no keys start with {args.prefix!r}" if args.prefix else "no keys are set")
    return EXIT_OK


def _write(app: App, args: argparse.Namespace) -> int:
    value = {Op.SET: getattr(args, "value", None), Op.INCR: getattr(args, "by", None)}
    mutation = Mutation(
        **({"id": args.id} if args.id else {}),
        op=args.op,
        key=args.key,
        value=value.get(args.op),
        actor=args.actor,
        reason=args.reason,
        expected_version=args.expected_version,
        ttl_sec=getattr(args, "ttl", None),
    )
    outcome: Outcome = app.gateway.propose(mutation)
    print(json_line(outcome.to_dict()) if args.json else outcome_line(outcome))
    return EXIT_REJECTED if isinstance(outcome, Rejected) else EXIT_OK
