"""Entry point of the ``deliberate`` command: global options, dispatch and exit codes."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError
from redis.exceptions import ConnectionError as RedisConnectionError

from bot.app import build_app, load_app_config
from bot.cli import (
    bench,
    classify,
    console,
    history,
    rules,
    run,
    state,
    trace,
    worker,
    workspaces,
)
from bot.json_logging import configure as configure_logging
from core.config.core_config import config_path
from core.errors import ConfigError, StoreError

__all__ = ["main", "parser"]

EXIT_REJECTED, EXIT_USAGE = 1, 2


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="deliberate",
        description="Deliberate: think out loud with an AI assistant; the application, never "
        "the model, commits every change to shared state.",
        epilog="Exit codes: 0 ok, 1 rejected, conflict or not found, 2 usage or configuration "
        "error. Without REDIS_URL, state lives in a Redis embedded under DELIBERATE_HOME "
        "(default ./.deliberate).",
    )
    top.add_argument(
        "--workspace",
        default=os.environ.get("DELIBERATE_WORKSPACE", "local"),
        help="workspace id (default: $DELIBERATE_WORKSPACE or 'local')",
    )
    top.add_argument(
        "--config",
        type=Path,
        metavar="PATH",
        help="config file (default: $DELIBERATE_CONFIG or the shipped config)",
    )
    top.add_argument(
        "--redis-url",
        default=None,
        metavar="URL",
        help="Redis to use (default: $REDIS_URL, else the embedded one)",
    )
    top.add_argument(
        "--log-level",
        default=os.environ.get("DELIBERATE_LOG_LEVEL"),
        help="level of the JSON log lines on stderr (default INFO: every gateway decision; "
        "WARNING for the console, so they do not interleave with the conversation)",
    )
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    state.register(commands)
    history.register(commands)
    bench.register(commands)
    classify.register(commands)
    console.register(commands)
    trace.register(commands)
    rules.register(commands)
    worker.register(commands)
    run.register(commands)
    workspaces.register(commands)
    return top


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.log_level is None:
        args.log_level = "WARNING" if args.command == "console" else "INFO"
    if args.log_level.upper() not in LOG_LEVELS:
        print(
            f"deliberate: log level {args.log_level!r} (--log-level or DELIBERATE_LOG_LEVEL) "
            f"is not one of {', '.join(LOG_LEVELS)}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    configure_logging(args.log_level)
    try:
        code: int
        if getattr(args, "offline", False):  # needs the config, not the store
            code = args.handler(load_app_config(config_path(args.config)), args)
        else:
            app = build_app(args.workspace, config_path(args.config), args.redis_url)
            code = args.handler(app, args)
    except ConfigError as exc:
        print(f"deliberate: configuration error:\n{exc}", file=sys.stderr)
        return EXIT_USAGE
    except RedisConnectionError as exc:
        where = args.redis_url or os.environ.get("REDIS_URL") or "the embedded Redis"
        print(f"deliberate: cannot reach Redis at {where}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ValidationError as exc:
        for problem in exc.errors():
            field = ".".join(str(part) for part in problem["loc"])
            message = problem["msg"].removeprefix("Value error, ")
            print(f"deliberate: {field + ': ' if field else ''}{message}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:
        print(f"deliberate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except StoreError as exc:
        print(f"deliberate: the store is inconsistent: {exc}", file=sys.stderr)
        return EXIT_REJECTED
    return code


if __name__ == "__main__":
    sys.exit(main())
