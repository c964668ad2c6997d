"""``deliberate console [--session ID] [--actor KIND:ID] [--topic T] [--json]``: the loop in a
terminal, offline unless ``OPENAI_API_KEY`` is set."""

from __future__ import annotations

import argparse
import secrets
import sys
import time

from bot.app import App
from bot.cli.args import actor, session_id
from bot.console import HELP, Console
from core.state.actor import Actor
from core.state.limits import Unacknowledged

__all__ = ["register"]


def _topic(text: str) -> str:
    if not text.strip() or len(text) > 200:
        raise argparse.ArgumentTypeError("a topic is 1 to 200 characters")
    return text


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    console = commands.add_parser(
        "console",
        help="think out loud in the terminal",
        description="Run the deliberation loop in the terminal: type messages; buttons appear "
        "as numbered choices. With stdin not a terminal, read one message per line ('/click "
        "N' or '/do ActionType' to click). Without OPENAI_API_KEY everything runs offline "
        "(embedded classifier, template responder).",
        epilog=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    console.add_argument(
        "--session",
        type=session_id,
        metavar="ID",
        help="session to join or resume (default: a new one, printed at the start)",
    )
    console.add_argument(
        "--actor",
        type=actor,
        default=Actor.parse("user:console"),
        metavar="KIND:ID",
        help="who you are (default user:console; e.g. moderator:sam)",
    )
    console.add_argument(
        "--topic", help="what the session deliberates (default: its first message)"
    )
    console.add_argument("--json", action="store_true", help="print one JSON object per event")
    console.set_defaults(handler=_console)


def _console(app: App, args: argparse.Namespace) -> int:
    # two consoles started in the same second must not share a session by accident
    session = args.session or f"console-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    runtime = app.runtime()
    console = Console(runtime, session, args.actor, print, as_json=args.json, topic=args.topic)
    interactive = sys.stdin.isatty() and not args.json
    if interactive:
        print(f"session {session}, as {args.actor}. /help for commands, /quit to leave.")
    else:
        print(f"deliberate console: session {session}", file=sys.stderr)
    while True:
        try:
            line = input("you> ") if interactive else sys.stdin.readline()
        except (EOFError, KeyboardInterrupt):
            break
        if not interactive and line == "":
            break
        try:
            if not console.handle(line):
                break
        except Unacknowledged as exc:  # the session goes on: say it, as the bots do
            print(f"deliberate: {exc}", file=sys.stderr)
    return 0
