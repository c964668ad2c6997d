"""``deliberate run slack|discord``: the bot on a chat platform, until interrupted."""

from __future__ import annotations

import argparse
import logging
import os

from bot.app import App
from bot.chat.workspaces import Workspaces
from bot.commands import SUMMARIES
from bot.commands.args import env_port, port
from bot.commands.listening import bound
from bot.discord.shards import Shards
from bot.screen.json_lines import say

__all__ = ["register"]

EXIT_USAGE = 2
log = logging.getLogger("deliberate.run")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser(
        "run",
        help=SUMMARIES["run"],
        description="Run the deliberation loop on a chat platform. Rules run in `deliberate "
        "worker`, which should run next to it.",
    )
    platforms = run.add_subparsers(dest="platform", required=True, metavar="PLATFORM")
    slack = platforms.add_parser(
        "slack",
        help="run the Slack bot",
        description="Run the Slack bot. For one team: SLACK_BOT_TOKEN (that team is served). "
        "For an app many teams install: SLACK_CLIENT_ID and SLACK_CLIENT_SECRET (installs "
        "at /slack/install, kept in Redis; serve the teams listed under tenants.slack, or "
        "any_team). With SLACK_APP_TOKEN it connects in Socket Mode; else it serves HTTP on "
        "--port at /slack/events and checks every request against SLACK_SIGNING_SECRET. "
        "SLACK_API_URL points the Web API elsewhere (a proxy). docs/slack.md "
        "shows how to create the app.",
    )
    slack.add_argument(
        "--port",
        type=port,
        default=None,
        help="HTTP mode: port to listen on (default: $PORT or 3000; 0 picks a free one)",
    )
    slack.add_argument(
        "--host", default="0.0.0.0", help="HTTP mode: address to listen on (default 0.0.0.0)"
    )
    slack.set_defaults(handler=_slack)
    _register_discord(platforms)


def _register_discord(platforms: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    discord = platforms.add_parser(
        "discord",
        help="run the Discord bot",
        description="Run the Discord bot over the gateway. DISCORD_TOKEN is always needed, and "
        "the Message Content intent must be on in the Developer Portal. Where it listens: "
        "DISCORD_CHANNELS / --channel (default: every channel it can read) and DISCORD_LISTEN / "
        "--listen (default: mentions). DISCORD_GUILD_ID / --guild registers /deliberate on one "
        "server at once (global registration can take a while to show). DISCORD_SHARD / --shard "
        "runs some of Discord's shards (required past 2,500 servers): replicas share the "
        "servers, one shard each, and shard 0's gets the direct messages and registers "
        "/deliberate. DISCORD_API_URL points the REST API elsewhere. docs/discord.md shows how "
        "to create the app.",
    )
    discord.add_argument(
        "--channel",
        action="append",
        metavar="ID_OR_NAME",
        help="listen in this channel (and its threads); repeat for more (default: "
        "$DISCORD_CHANNELS, else every channel the bot can read)",
    )
    discord.add_argument(
        "--listen",
        choices=["mentions", "all"],
        help="take a turn from every message, or only from those that mention the bot "
        "(default: $DISCORD_LISTEN, else mentions); direct messages always count",
    )
    discord.add_argument(
        "--guild", metavar="ID", help="register /deliberate on this server only (DISCORD_GUILD_ID)"
    )
    discord.add_argument(
        "--shard",
        type=_shard,
        metavar="I/N",
        help="run shard I of N (e.g. 0/2; I,J/N runs several in this process): the servers "
        "with (id >> 22) %% N = I, and with shard 0 the direct messages; every replica with "
        "the same N (DISCORD_SHARD; default: one connection for every server)",
    )
    discord.set_defaults(handler=_discord)


def _shard(text: str) -> str:
    try:
        return str(Shards.parse(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _slack(app: App, args: argparse.Namespace) -> int:
    from slack_bolt.error import BoltError
    from slack_sdk.errors import SlackClientError

    from bot.slack.adapter import SlackAdapter
    from bot.slack.bolt import build_bolt_app
    from bot.slack.links import events_line, install_line
    from bot.slack.serve import EVENTS_PATH, http_server, run_socket_mode, socket_mode
    from bot.slack.settings import SlackSettings

    settings = SlackSettings.from_env(os.environ)  # ValueError: a usage error, named
    listen = args.port if args.port is not None else env_port(3000)
    adapter = SlackAdapter(Workspaces(app), settings.web_client())
    oauth = settings.oauth.settings(app.redis) if settings.oauth is not None else None
    try:
        bolt = build_bolt_app(adapter, settings, oauth=oauth)
        if oauth is None:
            adapter.serve_token_team()
    except (BoltError, SlackClientError, OSError) as exc:
        say(f"deliberate: Slack refused the bot token or cannot be reached: {exc}", "error")
        return EXIT_USAGE
    try:
        if settings.socket_mode:
            log.info("slack: connecting in Socket Mode")
            run_socket_mode(socket_mode(bolt, settings.app_token))
        else:
            server = bound(lambda: http_server(bolt, args.host, listen), args.host, listen)
            url = f"http://{args.host}:{server.effective_port}{EVENTS_PATH}"
            log.info("slack: listening on %s", url)
            events = events_line(os.environ, args.host, server.effective_port)
            say(f"deliberate: {events}")
            if oauth is not None:
                install = install_line(os.environ, args.host, server.effective_port)
                say(f"deliberate: {install}")
            server.run()
    except KeyboardInterrupt:
        pass
    except (SlackClientError, OSError) as exc:  # a refused app token, a port in use
        say(f"deliberate: cannot run the Slack bot: {exc}", "error")
        return EXIT_USAGE
    return 0


def _discord(app: App, args: argparse.Namespace) -> int:
    from bot.discord.serve import serve
    from bot.discord.settings import DiscordSettings

    env = dict(os.environ)
    if args.channel:
        env["DISCORD_CHANNELS"] = ",".join(args.channel)
    if args.listen:
        env["DISCORD_LISTEN"] = args.listen
    if args.guild:
        env["DISCORD_GUILD_ID"] = args.guild
    if args.shard:
        env["DISCORD_SHARD"] = args.shard
    settings = DiscordSettings.from_env(env)  # ValueError: a usage error, named
    problem = serve(app, settings)
    if problem:
        say(f"deliberate: {problem}", "error")
        return EXIT_USAGE
    return 0
