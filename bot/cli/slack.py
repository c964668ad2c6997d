"""``deliberate slack manifest``: the Slack app's manifest for where the bot runs, to paste
at https://api.slack.com/apps (Create New App -> From a manifest)."""

from __future__ import annotations

import argparse
import json
import os

import yaml

from bot.commands import SUMMARIES
from bot.slack.manifest.document import Manifest, app_manifest
from bot.slack.manifest.scopes import FEATURES

__all__ = ["register"]

OPTIONAL = tuple(name for name in FEATURES if name != "chat")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    slack = commands.add_parser(
        "slack",
        help=SUMMARIES["slack"],
        description="The Slack app's set-up. 'deliberate slack manifest' prints the app's "
        "manifest: create the app from it at https://api.slack.com/apps (Create New App -> "
        "From a manifest), install it, then run 'deliberate run slack'.",
    )
    verbs = slack.add_subparsers(dest="verb", required=True, metavar="VERB")
    manifest = verbs.add_parser(
        "manifest",
        help="print the Slack app's manifest (YAML; --json for JSON)",
        description="Print the Slack app's manifest. HTTP mode (the default) sends Slack's "
        "events, clicks and /deliberate to URL/slack/events; --socket makes a Socket Mode "
        "app (no public address: create an app-level token with connections:write for "
        "SLACK_APP_TOKEN). The bot scopes are those of the features it is made for.",
    )
    manifest.add_argument(
        "--url",
        default=os.environ.get("DELIBERATE_WEB_URL") or None,
        help="the https address where 'deliberate run slack' is reached (default: "
        "$DELIBERATE_WEB_URL); required unless --socket",
    )
    manifest.add_argument("--socket", action="store_true", help="Socket Mode: no request URLs")
    manifest.add_argument(
        "--oauth",
        action="store_true",
        default=bool(os.environ.get("SLACK_CLIENT_ID")),
        help="an app many teams install: adds URL/slack/oauth_redirect (default: on when "
        "SLACK_CLIENT_ID is set)",
    )
    manifest.add_argument(
        "--signin",
        action="store_true",
        help="Sign in with Slack on 'deliberate web': adds the openid and profile user "
        "scopes and the web's callback, WEB_URL/signin/slack/callback",
    )
    manifest.add_argument(
        "--web-url",
        default=None,
        help="the address of 'deliberate web', for --signin (default: --url, else "
        "$DELIBERATE_WEB_URL)",
    )
    manifest.add_argument(
        "--without",
        action="append",
        default=[],
        choices=OPTIONAL,
        metavar="FEATURE",
        help="leave out a feature's scopes: groups (roles bound to Slack user groups), dms "
        "(rules that tell a person directly), orgs (Enterprise Grid); repeat it for several",
    )
    manifest.add_argument("--name", default="Deliberate", help="the app's name in Slack")
    manifest.add_argument("--json", action="store_true", help="JSON instead of YAML")
    manifest.set_defaults(handler=_manifest, standalone=True)


def _manifest(args: argparse.Namespace) -> int:
    web_url = None
    if args.signin:
        web_url = args.web_url or args.url or os.environ.get("DELIBERATE_WEB_URL") or None
        if web_url is None:
            raise ValueError("--signin needs the web's address: --web-url https://HOST")
    made = Manifest(
        name=args.name,
        url=None if args.socket else args.url,
        socket=args.socket,
        oauth=args.oauth and not args.socket,
        web_url=web_url,
        features=tuple(name for name in OPTIONAL if name not in args.without),
    )
    manifest = app_manifest(made)
    if args.json:
        print(json.dumps(manifest, indent=2))
    else:
        print(yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True, width=1000), end="")
    return 0
