"""``deliberate workspaces``: every workspace, with its tenant and last activity (a platform's
event, or a turn, click or commit by any process): each listed in the config, each that a
platform's event has reached (a server or team served with ``any_server``/``any_team``, a
direct message's private one), and each that holds data (written with ``--workspace``, or by
a config that listed it once)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from bot.app import App
from bot.chat.workspaces import WorkspaceFound, every_workspace
from bot.commands import SUMMARIES
from bot.reports.render import json_line
from bot.screen import one_line
from core.config.tenants import Tenancy

__all__ = ["register"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    workspaces = commands.add_parser(
        "workspaces",
        help=SUMMARIES["workspaces"],
        description="List every workspace with its tenant (the Slack team or org, the "
        "Discord server or the person of a direct message), whether rules run there (the "
        "tenant is configured) and when it was last active: its last event from a chat "
        "platform, turn, click or commit, from whichever process (a bot, the console, the "
        "CLI, the worker, the web); then each workspace that only holds data (written with "
        "--workspace, say). Use a workspace's name with --workspace to read or change its "
        "state.",
    )
    workspaces.add_argument("--json", action="store_true", help="one JSON object per line")
    workspaces.set_defaults(handler=_workspaces)


def _workspaces(app: App, args: argparse.Namespace) -> int:
    tenancy = Tenancy(app.config.tenants, app.config.roles)
    listing = every_workspace(app.redis, tenancy, own=app.store.workspace)
    ruled = set(app.rule_workspaces())  # what the config says now, not when it was seen
    if args.json:
        for row in listing.workspaces:
            print(json_line(_record(row, row.workspace in ruled)))
    elif not listing.workspaces:
        print(
            "No workspace yet: none holds data, and the config lists no server or team "
            "under tenants:."
        )
    else:
        width = max(len(name) for name in listing.names)
        for row in listing.workspaces:
            rules = "rules" if row.workspace in ruled else "no rules"
            print(
                one_line(
                    f"{row.workspace:<{width}}  {row.kind:<10}  {row.described:<45}  "
                    f"{rules:<8}  {_ago(row)}"
                )
            )
    if not listing.complete:
        print(
            "Redis holds more keys than one look reads: a workspace holding data may be "
            "missing here (--workspace NAME still reaches it).",
            file=sys.stderr,
        )
    return 0


def _ago(row: WorkspaceFound) -> str:
    if not row.last_active_ms:
        return "never active"
    when = datetime.fromtimestamp(row.last_active_ms / 1000, UTC)
    return "last active " + when.strftime("%Y-%m-%d %H:%M:%SZ")


def _record(row: WorkspaceFound, rules: bool) -> dict[str, object]:
    platform, tenant, private = None, None, False
    if row.seen is not None:
        platform, tenant, private = row.seen.platform, row.seen.tenant, row.seen.private
    elif row.configured is not None:
        platform, tenant = row.configured.platform, row.configured.id
        private = row.configured.private
    return {
        "workspace": row.workspace,
        "kind": row.kind,
        "configured": row.configured is not None,
        "holdsData": row.holds_data,
        "platform": platform,
        "tenant": tenant,
        "private": private,
        "rules": rules,
        "lastActiveMs": row.last_active_ms or None,
    }
