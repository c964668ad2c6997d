"""``deliberate state get|list|set|incr|delete``: every write goes through the gateway.
``deliberate proposals`` and ``deliberate revert`` are modules of their own, so that ``state
get`` imports neither (nor what deciding a proposal needs)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from bot.commands import SUMMARIES
from bot.commands.args import (
    TIME_HELP,
    When,
    actor,
    add_reveal,
    duration,
    json_or_text,
    masking,
    state_key,
    when,
)
from bot.redis.connection import connect
from bot.reports.render import entry_line, json_line, outcome_line, timed_fields
from bot.screen import one_line
from core.state.codec import UnreadableEntry
from core.state.commit_result import Rejected
from core.state.mutation import Mutation, Op
from core.state.scripts import server_ms
from core.state.store import StateStore
from core.state.value_json import MAX_DEPTH

if TYPE_CHECKING:
    from bot.app import App
    from core.gateway.outcome import Outcome
    from core.state.checkpoints import Image
    from core.state.entry import Entry
    from core.state.moment import Moment

__all__ = ["register"]

EXIT_OK, EXIT_REJECTED, EXIT_USAGE = 0, 1, 2


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    state = commands.add_parser(
        "state",
        help=SUMMARIES["state"],
        description="Read canonical state, or change it through the "
        "mutation gateway (policy applies to every write).",
    )
    sub = state.add_subparsers(dest="state_command", required=True, metavar="COMMAND")

    get = sub.add_parser("get", help="show one key", description="Show the live entry of KEY.")
    get.add_argument("key", type=state_key)
    get.add_argument("--json", action="store_true", help="print the entry as JSON")
    _add_at(get)
    add_reveal(get)
    get.set_defaults(handler=_get, standalone=True)  # the store, and the policy alone

    lst = sub.add_parser(
        "list",
        help="list keys by prefix",
        description="List live entries whose key starts with PREFIX.",
    )
    lst.add_argument("prefix", nargs="?", default="")
    lst.add_argument("--json", action="store_true", help="one JSON object per line")
    _add_at(lst)
    add_reveal(lst)
    lst.set_defaults(handler=_list)

    put = sub.add_parser(
        "set",
        help="set a key",
        description="Set KEY to VALUE (parsed as JSON when it parses, else taken as a string). "
        f"A value the store cannot keep (nested more than {MAX_DEPTH} levels, NaN, Infinity, "
        "a number too large for JSON, bytes that are not UTF-8) is a usage error (exit 2): "
        "nothing is written.",
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
            "--break-glass",
            metavar="REASON",
            help="apply at once, skipping the approval the key's writes wait for: only a "
            "person holding the key's break-glass role, only with a REASON; flagged, "
            "announced and listed for review ('deliberate proposals --break-glass')",
        )
        writer.add_argument(
            "--for",
            dest="for_sec",
            type=duration,
            metavar="DURATION",
            help="a change for a while: it reverts by itself after DURATION (90s, 30m, 2h, "
            "1d, 1h30m), through the gateway, unless the key was changed again meanwhile",
        )
        writer.add_argument(
            "--id",
            metavar="ID",
            help="the mutation id (default: a new one); a change sent again with the same id "
            "is applied once, e.g. after Redis did not confirm it",
        )
        writer.add_argument("--json", action="store_true", help="print the outcome as JSON")
        add_reveal(writer)  # the value committed, or a conflict's latest one


def _add_at(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--at",
        type=when,
        metavar="TIME",
        help="as it was at TIME, rebuilt in memory from the checkpoint and the log (nothing "
        f"is written): {TIME_HELP}. The first line says which moment it shows (on stderr "
        "with --json); a moment the log was compacted past is refused (exit 1), naming the "
        "oldest one available",
    )


def _as_of(store: StateStore, at: When, as_json: bool) -> tuple[Image, Moment, dict[str, Entry]]:
    """The state at ``at``, rebuilt in memory, and its entries live then; says which moment
    it shows."""
    # replay, checkpoints and the chain: loaded by --at alone, not by every read
    from core.state.replay import Replayer, visible

    moment = at.moment(store)
    image = Replayer(store).as_of(moment)
    through = f"the log through {image.last_id}" if image.last_id else "before any record"
    print(f"as of {moment}: {through}", file=sys.stderr if as_json else sys.stdout)
    return image, moment, visible(image, moment.at_ms)


def _get(args: argparse.Namespace) -> int:
    shown = masking(args)  # the config's policy first: its errors before anything is read
    store = StateStore(connect(args.redis_url), args.workspace)  # a read: no store settings
    now_ms = None
    try:
        if args.at is None:
            entry = store.get(args.key)
        else:
            image, moment, live = _as_of(store, args.at, args.json)
            entry, now_ms = live.get(args.key), moment.at_ms
    except UnreadableEntry as exc:
        print(f"deliberate: {exc}", file=sys.stderr)
        return EXIT_REJECTED
    if entry is None:
        version = store.version(args.key) if args.at is None else image.versions.get(args.key, 0)
        message = f"{args.key} is not set" + (f" (last version {version})" if version else "")
        if args.json:
            print(json_line({"key": args.key, "found": False, "version": version}))
        else:
            print(message)
        return EXIT_REJECTED
    timed = store.timed([entry]).get(entry.key) if args.at is None else None
    entry = shown.entry(entry)
    if args.json:
        print(json_line(entry.model_dump(mode="json", by_alias=True) | timed_fields(timed)))
    else:
        now = now_ms if args.at is not None else server_ms(store.redis, store.keys.versions)
        print(entry_line(entry, now, timed))
    return EXIT_OK


def _list(app: App, args: argparse.Namespace) -> int:
    skipped: list[UnreadableEntry] = []
    if args.at is None:
        entries = app.store.entries(args.prefix, skipped)
        now_ms = server_ms(app.redis, app.store.keys.versions)
    else:
        _, moment, live = _as_of(app.store, args.at, args.json)
        now_ms = moment.at_ms
        entries = [live[k] for k in sorted(live) if k.startswith(args.prefix)]
    timed = app.store.timed(entries) if args.at is None else {}
    shown = masking(args, app.policy)
    for entry in map(shown.entry, entries):
        if args.json:
            data = entry.model_dump(mode="json", by_alias=True)
            print(json_line(data | timed_fields(timed.get(entry.key))))
        else:
            print(entry_line(entry, now_ms, timed.get(entry.key)))
    for bad in skipped:  # never a silent gap; the others are still shown
        print(one_line(f"deliberate state: skipped {bad.key}: {bad.why}"), file=sys.stderr)
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
        for_sec=args.for_sec,
    )
    outcome: Outcome
    if args.break_glass is not None:
        from core.gateway.break_glass import BreakGlass

        outcome = BreakGlass(app.gateway).write(mutation, args.break_glass)
    else:
        outcome = app.gateway.propose(mutation)
    shown = masking(args, app.policy).outcome(outcome)
    print(json_line(shown.to_dict()) if args.json else outcome_line(shown))
    return EXIT_REJECTED if isinstance(outcome, Rejected) else EXIT_OK
