"""``deliberate web``: the operator's window, served by waitress until interrupted."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from bot.app import App
from bot.commands import SUMMARIES
from bot.commands.args import env_port, port
from bot.commands.listening import address, bound
from bot.screen.json_lines import say

__all__ = ["register"]

EXIT_USAGE = 2
log = logging.getLogger("deliberate.web")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    web = commands.add_parser(
        "web",
        help=SUMMARIES["web"],
        description="Serve the operator's window: per workspace its state, mutation log, "
        "traces, the inbox of pending proposals (apply, edit, reject) and the rules' recent "
        "evaluations; /metrics for Prometheus and /health for a router. People sign in with "
        "Slack (SLACK_CLIENT_ID, SLACK_CLIENT_SECRET) or Discord (DISCORD_CLIENT_ID, "
        "DISCORD_CLIENT_SECRET); DELIBERATE_OPERATOR_TOKEN reads everything and acts on "
        "nothing; DELIBERATE_METRICS_TOKEN guards /metrics (else only loopback clients get "
        "it). Anywhere but a loopback address it needs DELIBERATE_WEB_URL=https://… (the "
        "address people use: sign-in comes back there).",
    )
    web.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    web.add_argument(
        "--port",
        type=port,
        default=None,
        help="port to listen on (default: $PORT, else 8080; 0 picks a free one)",
    )
    web.add_argument("--threads", type=int, default=8, help="requests served at once (default 8)")
    web.set_defaults(handler=_web)


def _web(app: App, args: argparse.Namespace) -> int:
    from waitress.server import create_server

    from bot.web.settings import WebSettings
    from bot.web.site import create_app

    listen = args.port if args.port is not None else env_port(8080)
    site = create_app(app, WebSettings.from_env(args.host))
    server: Any = bound(  # the stubs declare no effective_port
        lambda: create_server(
            site, host=args.host, port=listen, threads=args.threads, ident="deliberate"
        ),
        args.host,
        listen,
    )
    url = f"http://{address(args.host, server.effective_port)}"
    try:  # (Ctrl-C from the moment it says where it is: a server stopped, exit 0)
        log.info("web: listening on %s", url)
        say(f"deliberate: the web inspector is at {url}")
        server.run()
    except KeyboardInterrupt:
        pass
    except OSError as exc:
        say(f"deliberate: cannot serve the web inspector: {exc}", "error")
        return EXIT_USAGE
    return 0
