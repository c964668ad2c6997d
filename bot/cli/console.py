"""``deliberate console [--session ID] [--actor KIND:ID | --as NAME] [--topic T] [--json]``:
the loop in a terminal, offline unless ``OPENAI_API_KEY`` is set. With stdin and stdout both
terminals (and no ``--json``), lines are read through ``bot.console.terminal`` (editing,
history, Ctrl-C as in a shell); otherwise one line at a time from stdin. Ctrl-C while a line
is handled stops the console as it stops any command (``bot.main``: exit code 130)."""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from collections.abc import Callable

from bot.app import App
from bot.chat.people import NAME_RULE, local_person
from bot.commands import SUMMARIES
from bot.commands.args import actor, local_as, session_id
from bot.console import COLOURS, HELP, PLAIN, Console, Out
from bot.console.terminal import Terminal, colour_wanted, open_history
from bot.screen import colour_stream, one_line
from core.runtime.runner import Runtime
from core.state.actor import Actor
from core.state.limits import Unacknowledged

__all__ = ["register"]

Read = Callable[[], str | None]


def _topic(text: str) -> str:
    if not text.strip() or len(text) > 200:
        raise argparse.ArgumentTypeError("a topic is 1 to 200 characters")
    return text


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    console = commands.add_parser(
        "console",
        help=SUMMARIES["console"],
        description="Run the deliberation loop in the terminal: type messages; buttons appear "
        "as numbered choices. With stdin not a terminal, read one message per line ('N' or "
        "'/click N' or '/do ActionType' to click). Without OPENAI_API_KEY everything runs offline "
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
    who = console.add_mutually_exclusive_group()
    who.add_argument(
        "--actor",
        type=actor,
        default=Actor.parse("user:console"),
        metavar="KIND:ID",
        help="who you are, holding the kind's roles alone (default user:console; e.g. "
        "moderator:sam)",
    )
    who.add_argument(
        "--as",
        dest="as_name",
        type=local_as,
        metavar="NAME",
        help="who you are: local:NAME, with the roles the config binds to it (roles: "
        f"members: [local:NAME]); {NAME_RULE}",
    )
    console.add_argument(
        "--topic",
        type=_topic,
        help="what a new session deliberates (default: its first message); a resumed session "
        "that has a topic keeps it, and says so: /topic renames it",
    )
    console.add_argument("--json", action="store_true", help="print one JSON object per event")
    console.set_defaults(handler=_console)


def _console(app: App, args: argparse.Namespace) -> int:
    # two consoles started in the same second must not share a session by accident
    session = args.session or f"console-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    colour = not args.json and colour_wanted(sys.stdout)
    out = _printer(colour)
    runtime = app.runtime()
    you = args.actor if args.as_name is None else local_person(app.config.roles, args.as_name)
    resumed = args.session is not None and runtime.queries.has_session(session)
    console = Console(
        runtime,
        session,
        you,
        out,
        as_json=args.json,
        topic=args.topic,  # (the first turn's: a session that has a topic keeps it)
        palette=COLOURS if colour else PLAIN,
        roles=app.config.roles,
    )
    read: Read = _piped_line
    again = " (resumed: /show shows what is on the table)" if resumed else ""
    said = sys.stderr
    if sys.stdin.isatty() and sys.stdout.isatty() and not args.json:
        print(f"session {session}{again}, as {you}. /help for commands, /quit to leave.")
        read = Terminal(open_history(), out, colour=colour).read
        said = sys.stdout
    else:
        print(f"deliberate console: session {session}{again}", file=sys.stderr)
    if resumed and args.topic and (kept := _other_topic(runtime, session, args.topic)):
        print(
            f'(session {session} already has the topic "{one_line(kept)}"; --topic '
            f"{one_line(args.topic)} was not applied: type /topic {one_line(args.topic)} "
            "to rename it)",
            file=said,
        )
    return _converse(console, read)


def _other_topic(runtime: Runtime, session: str, asked: str) -> str | None:
    """The topic the session has, when it is not ``asked``: a resumed session keeps its
    topic, as renaming it changes its decision key for everyone in it (``/topic`` does that,
    and says so in the session)."""
    kept = runtime.queries.interaction(session).topic
    return kept if kept and " ".join(kept.split()) != " ".join(asked.split()) else None


def _printer(colour: bool) -> Out:
    """Where the console's lines go: stdout, cleaned as every command's is; when they are
    coloured, of everything but colours (the palette paints words it cleaned first)."""
    if not colour:
        return print
    painted = colour_stream(sys.stdout)
    return lambda text: print(text, file=painted)


def _converse(console: Console, read: Read) -> int:
    """Hand each line ``read`` gives to the console until it gives None or the person
    leaves."""
    while (line := read()) is not None:
        try:
            if not console.handle(line):
                break
        except Unacknowledged as exc:  # the session goes on: say it, as the bots do
            print(f"deliberate: {exc}", file=sys.stderr)
    return 0


def _piped_line() -> str | None:
    try:
        line = sys.stdin.readline()
    except (EOFError, KeyboardInterrupt):
        return None
    return line or None
