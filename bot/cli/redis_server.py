"""``deliberate redis status|stop``: the embedded Redis of ``DELIBERATE_HOME``. Neither needs
the config nor starts a server."""

from __future__ import annotations

import argparse
import os
import sys

from bot.commands import SUMMARIES
from bot.redis.connection import server_name
from bot.redis.embedded import EmbeddedServer, ServerBusy, home_dir
from bot.reports.render import json_line

__all__ = ["register"]

EXIT_OK, EXIT_NOT_RUNNING, EXIT_BUSY = 0, 1, 1


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    redis = commands.add_parser(
        "redis",
        help=SUMMARIES["redis"],
        description="Without REDIS_URL, state lives in one redis-server per data directory "
        "(DELIBERATE_HOME, default ./.deliberate), started by the first command that needs "
        "it and shared by every process after it; it keeps running after that command exits.",
    )
    sub = redis.add_subparsers(dest="redis_command", required=True, metavar="COMMAND")
    status = sub.add_parser(
        "status",
        help="is it running: pid, socket, data, memory, uptime",
        description="Whether the embedded server of DELIBERATE_HOME runs, and its pid, socket, "
        "data directory, memory used, uptime and durability setting. Exit 0 when it runs, 1 "
        "when it does not (the next command that needs it starts it). Says so when "
        "REDIS_URL (or --redis-url) is set: commands then use that server, not this one.",
    )
    status.add_argument("--json", action="store_true", help="print the status as JSON")
    status.set_defaults(handler=_status, standalone=True)
    stop = sub.add_parser(
        "stop",
        help="shut it down, saving its data",
        description="SHUTDOWN SAVE the embedded server of DELIBERATE_HOME and wait until its "
        "process is gone. Refuses (exit 1) while other clients are connected (a worker, a "
        "bot), unless --force. Says so, and exits 0, when none runs.",
    )
    stop.add_argument(
        "--force", action="store_true", help="stop it even while other clients use it"
    )
    stop.set_defaults(handler=_stop, standalone=True)


def _elsewhere(args: argparse.Namespace) -> str | None:
    """The note that commands do not use the embedded server, when they do not."""
    if not (args.redis_url or os.environ.get("REDIS_URL")):
        return None
    origin = "--redis-url" if args.redis_url else "REDIS_URL"
    return f"{origin} is set: commands use {server_name(args.redis_url)}, not the embedded server"


def _status(args: argparse.Namespace) -> int:
    server = EmbeddedServer(home_dir())
    state = server.status()
    note = _elsewhere(args)
    if args.json:
        print(json_line({"running": state is not None, "in_use": note is None, **(state or {})}))
        return EXIT_OK if state else EXIT_NOT_RUNNING
    if note:
        print(note)
    if state is None and (pid := server.silent_pid()) is not None:
        print(
            f"the embedded Redis of {server.home} (pid {pid}) runs but does not answer on "
            f"{server.socket} (still loading its data?)"
        )
        return EXIT_NOT_RUNNING
    if state is None:
        print(f"the embedded Redis of {server.home} is not running", end="")
        print("" if note else " (the next command that needs it starts it)")
        return EXIT_NOT_RUNNING
    print(f"the embedded Redis of {server.home} is running")
    for label, value in [
        ("pid", state["pid"]),
        ("socket", f"unix://{state['socket']}"),
        ("data", f"{state['home']} (appendonly.aof: {state['aof_bytes']} bytes)"),
        ("memory", f"{state['used_memory_human']} used"),
        ("uptime", _duration(state["uptime_sec"])),
        ("clients", state["clients"]),
        ("durability", f"appendfsync {state['appendfsync']}"),
        ("version", f"Redis {state['version']}"),
    ]:
        print(f"  {label + ':':12}{value}")
    return EXIT_OK


def _stop(args: argparse.Namespace) -> int:
    server = EmbeddedServer(home_dir())
    note = _elsewhere(args)
    if note:
        print(note)
    try:
        pid = server.stop(force=args.force)
    except ServerBusy as busy:
        print(f"deliberate: {busy} ({server.describe()})", file=sys.stderr)
        return EXIT_BUSY
    if pid is None:
        print(f"the embedded Redis of {server.home} is not running: nothing to stop")
    else:
        print(f"stopped the embedded Redis of {server.home} (pid {pid}); data saved")
    return EXIT_OK


def _duration(seconds: int) -> str:
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{n}{unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "m")) if n]
    return " ".join([*parts, f"{secs}s"])
