"""Entry point of the ``deliberate`` command: global options, dispatch and exit codes.

Ctrl-C, at any moment, ends a command with exit 130 and one line (``deliberate:
interrupted``), never a traceback; a second one while it winds down ends it at once. So
that this holds from the first instant, the module imports nothing heavy: ``_run`` does.

Everything a command writes on stdout and stderr is cleaned of what would steer the terminal
(``bot.screen``): a value, a reason or a name read from the store is shown, never obeyed."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from bot.commands import SUMMARIES
from bot.commands.exits import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_REJECTED,
    EXIT_USAGE,
    exit_at_once,
    say_interrupted,
)
from bot.screen import cleaned
from bot.screen.json_lines import json_stderr, say
from bot.screen.json_logging import FORMATS, log_format
from bot.screen.json_logging import configure as configure_logging

__all__ = [
    "COMMANDS",
    "EXIT_INTERRUPTED",
    "REVEALING",
    "exit_at_once",
    "listing",
    "main",
    "parser",
    "say_interrupted",
]

# each command and the module that registers it, in the order ``--help`` lists them: a run
# imports the module of its own command alone, so no command pays for another's SDKs
COMMANDS = {
    "state": "bot.cli.state",
    "proposals": "bot.cli.proposals",
    "revert": "bot.cli.revert",
    "log": "bot.cli.history",
    "replay": "bot.cli.history",
    "compact": "bot.cli.history",
    "bench": "bot.cli.bench",
    "classify": "bot.cli.perception",
    "perception": "bot.cli.perception",
    "console": "bot.cli.console",
    "trace": "bot.cli.trace",
    "rules": "bot.cli.rules",
    "why": "bot.cli.rules",
    "worker": "bot.cli.worker",
    "run": "bot.cli.run",
    "slack": "bot.cli.slack",
    "workspaces": "bot.cli.workspaces",
    "redis": "bot.cli.redis_server",
    "config": "bot.cli.config",
    "web": "bot.web.command",
}


def parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or the global options and ``command`` alone."""
    top = _global_options()
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    wanted = [COMMANDS[command]] if command in COMMANDS else COMMANDS.values()
    for module in dict.fromkeys(wanted):
        importlib.import_module(module).register(commands)
    return top


def listing() -> argparse.ArgumentParser:
    """The global options and each command by its line alone, no command's module imported:
    what ``--help`` prints, the usage error of no command or a word no command has, and the
    command a command line names. Anything after a command is left to that command's own
    parser (``parse_known_args``)."""
    top = _global_options()
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        commands.add_parser(name, help=SUMMARIES[name], add_help=False)
    return top


class _Parser(argparse.ArgumentParser):
    """A usage error (a bad value included) is one line, naming where the usage is."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _global_options() -> argparse.ArgumentParser:
    top = _Parser(
        prog="deliberate",
        description="Deliberate: think out loud with an AI assistant; the application, never "
        "the model, commits every change to shared state.",
        epilog="Exit codes: 0 ok, 1 rejected, conflict or not found, 2 usage or configuration "
        "error, or Redis failing. Without REDIS_URL, state lives in the embedded Redis of "
        "DELIBERATE_HOME (default ./.deliberate): one server per directory, kept running "
        "between commands ('deliberate redis status', 'deliberate redis stop').",
    )
    top.add_argument(
        "--workspace",
        default=os.environ.get("DELIBERATE_WORKSPACE", "local"),
        help="workspace id (default: $DELIBERATE_WORKSPACE or 'local')",
    )
    top.add_argument(
        "--config",
        type=Path,
        action="append",
        metavar="PATH",
        help="a config file merged on top of the shipped defaults; repeat it to layer "
        "several, later ones winning (default: $DELIBERATE_CONFIG, several separated by "
        f"'{os.pathsep}'; 'deliberate config show --origin' prints the result)",
    )
    top.add_argument(
        "--redis-url",
        default=None,
        metavar="URL",
        help="Redis to use (default: $REDIS_URL, else the embedded one)",
    )
    top.add_argument(
        "--log-level",
        default=os.environ.get("DELIBERATE_LOG_LEVEL") or None,
        metavar="LEVEL",
        help="write log lines on stderr from LEVEL up: debug, info (every gateway "
        "decision and rule evaluation), warning, error (default: $DELIBERATE_LOG_LEVEL; "
        "else warnings and errors only; 'run', 'web' and 'worker' without --burst, which "
        "serve, log from info)",
    )
    top.add_argument(
        "--log-format",
        default=os.environ.get("DELIBERATE_LOG_FORMAT") or None,
        metavar="FORMAT",
        help="text (plain lines) or json (one JSON object a line): every line on stderr is "
        "in it, the command's own words and errors too (default: $DELIBERATE_LOG_FORMAT; "
        "else text on a terminal; else json for a command that serves or with --log-level, "
        "text otherwise)",
    )
    top.add_argument(
        "--log-file",
        type=Path,
        default=os.environ.get("DELIBERATE_LOG_FILE") or None,
        metavar="PATH",
        help="also append JSON log lines, from --log-level or else info, to PATH "
        "(default: $DELIBERATE_LOG_FILE)",
    )
    return top


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
REVEALING = "deliberate: showing secret values (--reveal)"


def main(argv: Sequence[str] | None = None) -> int:
    with cleaned():
        try:
            return _run(sys.argv[1:] if argv is None else list(argv))
        except KeyboardInterrupt:
            signal.signal(signal.SIGINT, exit_at_once)  # a second Ctrl-C while it winds down
            say_interrupted()
            return EXIT_INTERRUPTED


def _terminal(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def serves(args: argparse.Namespace) -> bool:
    """The command runs for an operator (a bot, the worker), not a person at a terminal."""
    return args.command in ("run", "web") or (args.command == "worker" and not args.burst)


def _run(argv: list[str]) -> int:
    # the command as argparse finds it (after global options, abbreviated or not), from the
    # listing, which imports none: then that command's parser alone. --help, no command or
    # an unknown one end in the listing.
    args = parser(listing().parse_known_args(argv)[0].command).parse_args(argv)
    fmt = (args.log_format or "").lower() or None
    if fmt is not None and fmt not in FORMATS:
        print(
            f"deliberate: log format {args.log_format!r} (--log-format or "
            f"DELIBERATE_LOG_FORMAT) is not one of {', '.join(FORMATS)}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    args.log_format = log_format(fmt, args.log_level, serves(args), _terminal(sys.stderr))
    if args.log_format == "json":  # from here on, every line on stderr is JSON
        json_stderr()
    return _checked(args)


def _checked(args: argparse.Namespace) -> int:
    """Check the rest of the global options, set up logging, and run the command, each
    error it ends with said in one line (exit 2 or 1)."""
    from pydantic import ValidationError
    from redis.exceptions import RedisClusterException, RedisError

    from bot.commands.args import not_utf8
    from bot.redis.connection import error_sentence, server_name
    from core.errors import ConfigError, StoreError
    from core.field_errors import plain_problems

    if (bad := not_utf8(args)) is not None:  # (argv may carry any bytes)
        return _failed(f"deliberate: {bad}; nothing was done", EXIT_USAGE)
    if args.log_level is not None and args.log_level.upper() not in LOG_LEVELS:
        return _failed(
            f"deliberate: log level {args.log_level!r} (--log-level or DELIBERATE_LOG_LEVEL) "
            f"is not one of {', '.join(level.lower() for level in LOG_LEVELS)}",
            EXIT_USAGE,
        )
    try:
        configure_logging(
            args.log_level, serving=serves(args), file=args.log_file, format=args.log_format
        )
    except OSError as exc:
        return _failed(
            f"deliberate: cannot write the log file {args.log_file}: {exc.strerror}", EXIT_USAGE
        )
    try:
        return _dispatch(args)
    except ConfigError as exc:
        return _failed(f"deliberate: configuration error:\n{exc}", EXIT_USAGE)
    except (RedisError, RedisClusterException) as exc:  # one line naming the server
        return _failed(
            f"deliberate: {error_sentence(exc)} ({server_name(args.redis_url)})", EXIT_USAGE
        )
    except ValidationError as exc:
        for loc, message in plain_problems(exc):
            field = ".".join(str(part) for part in loc)
            say(f"deliberate: {field + ': ' if field else ''}{message}", "error")
        return EXIT_USAGE
    except ValueError as exc:
        return _failed(f"deliberate: {exc}", EXIT_USAGE)
    except StoreError as exc:  # a commit unacknowledged, history compacted, the chain broken...
        said = f"{exc}" if exc.said_in_full else f"the store is inconsistent: {exc}"
        return _failed(f"deliberate: {said}", EXIT_REJECTED)
    except BrokenPipeError:  # the reader went away (| head): nothing left to say to it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


def _failed(line: str, code: int) -> int:
    say(line, "error")
    return code


def _dispatch(args: argparse.Namespace) -> int:
    """Run the handler with what it needs: nothing (a ``standalone`` command opens what it
    uses), the config (``offline``), or the app (config, Redis, store, gateway). With
    ``--reveal``, one line on stderr says that secret values are shown."""
    if getattr(args, "reveal", False):
        say(REVEALING, "warning")
    if getattr(args, "standalone", False):
        return int(args.handler(args))
    # the config's models, the rules and the connectors they name: loaded only for the
    # commands that use them (bot.app imports nothing of the command line)
    from bot.app import build_app, load_app_config
    from core.config.core_config import config_paths

    if getattr(args, "offline", False):
        return int(args.handler(load_app_config(config_paths(args.config)), args))
    app = build_app(args.workspace, config_paths(args.config), args.redis_url)
    try:
        return int(args.handler(app, args))
    finally:
        app.close()  # (a process that runs commands one after another keeps no socket)


if __name__ == "__main__":
    sys.exit(main())
