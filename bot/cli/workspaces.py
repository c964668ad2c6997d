"""``deliberate workspaces``: every workspace, with its tenant and last activity: each listed
in the config, and each that a platform's event has reached (a server or team served with
``any_server``/``any_team``, a direct message's private one)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from bot.app import App
from bot.cli.render import json_line
from bot.cli.worker import rule_workspaces
from bot.workspaces import WorkspaceDirectory, WorkspaceSeen
from core.config.tenants import Tenancy

__all__ = ["register"]


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    workspaces = commands.add_parser(
        "workspaces",
        help="list the workspaces: one per Slack team, Discord server or DM",
        description="List every workspace with its tenant (the Slack team or org, the "
        "Discord server or the person of a direct message), whether rules run there (the "
        "tenant is configured) and when an event last reached it. Use a workspace's name "
        "with --workspace to read or change its state.",
    )
    workspaces.add_argument("--json", action="store_true", help="one JSON object per line")
    workspaces.set_defaults(handler=_workspaces)


def _workspaces(app: App, args: argparse.Namespace) -> int:
    seen = {w.workspace: w for w in WorkspaceDirectory(app.redis).seen()}
    rows = list(seen.values())
    for tenant in Tenancy(app.config.tenants, app.config.roles).configured():
        if tenant.workspace not in seen:  # listed, never reached yet
            rows.append(WorkspaceSeen(tenant.workspace, tenant.platform, tenant.id, False, 0))
    ruled = set(rule_workspaces(app))  # what the config says now, not when it was seen
    if args.json:
        for row in rows:
            print(json_line(_record(row, row.workspace in ruled)))
        return 0
    if not rows:
        print("No workspace yet: list servers and teams under tenants: in the config.")
        return 0
    width = max(len(row.workspace) for row in rows)
    for row in rows:
        rules = "rules" if row.workspace in ruled else "no rules"
        print(f"{row.workspace:<{width}}  {row.described:<45}  {rules:<8}  {_ago(row)}")
    return 0


def _ago(row: WorkspaceSeen) -> str:
    if not row.last_active_ms:
        return "never active"
    when = datetime.fromtimestamp(row.last_active_ms / 1000, UTC)
    return "last active " + when.strftime("%Y-%m-%d %H:%M:%SZ")


def _record(row: WorkspaceSeen, rules: bool) -> dict[str, object]:
    return {
        "workspace": row.workspace,
        "platform": row.platform,
        "tenant": row.tenant,
        "private": row.private,
        "rules": rules,
        "lastActiveMs": row.last_active_ms or None,
    }
