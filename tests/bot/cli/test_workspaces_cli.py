"""``deliberate workspaces`` and ``deliberate worker`` across tenants: each listed tenant's
rules run in its own workspace, with its own bookkeeping; a workspace nobody configured (a
DM's, a server served with any_server) runs none."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from redis import Redis

from bot.app import build_app
from bot.chat.workspaces import Workspaces
from bot.cli.worker import served
from bot.redis.keyspace import last_written
from core.config.tenants import Tenant
from core.state.keys import WorkspaceKeys
from core.state.scripts import server_ms
from tests.bot.cli.process import run
from tests.bot.cli.test_rules_cli import rules_config
from tests.bot.test_console import console
from tests.conftest import delete_workspace
from tests.servers.webhook import WebhookServer
from tests.team_config import SHIPPED_TENANTS


@pytest.fixture
def hook() -> Iterator[WebhookServer]:
    with WebhookServer() as server:
        yield server


@pytest.fixture
def tenants(redis_client: Redis) -> Iterator[tuple[str, str, str]]:
    """Two listed teams' workspaces and a DM's, removed afterwards."""
    names = tuple(f"tenant-{i}-{uuid.uuid4().hex[:8]}" for i in range(2))
    dm = "discord-dm-140000000000000077"
    delete_workspace(redis_client, dm)
    yield names[0], names[1], dm
    for name in (*names, dm):
        delete_workspace(redis_client, name)


def config_for(tmp_path: Path, hook: WebhookServer, a: str, b: str) -> str:
    path = rules_config(tmp_path, hook)
    listed = (
        "tenants:\n  slack:\n    teams:\n"
        f"      - {{id: T0AAA, workspace: {a}}}\n      - {{id: T0BBB, workspace: {b}}}\n"
        "  discord:\n    direct_messages: true\n"
    )
    text = path.read_text()
    assert SHIPPED_TENANTS in text
    path.write_text(text.replace(SHIPPED_TENANTS, listed))
    return str(path)


def test_the_worker_runs_each_listed_tenants_rules_in_its_own_workspace(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    hook: WebhookServer,
    tenants: tuple[str, str, str],
    workspace: str,
    redis_client: Redis,
) -> None:
    a, b, dm = tenants
    config = config_for(tmp_path, hook, a, b)
    assert run(capsys, workspace, "--config", config, "worker", "--burst")[0] == 0
    for name, value in ((a, "postgres"), (b, "mysql"), (dm, "sqlite")):
        argv = ["--config", config, "state", "set", "decision.db", value, "--actor", "user:x"]
        assert run(capsys, name, *argv)[0] == 0
    code, _, err = run(capsys, workspace, "--config", config, "worker", "--burst")
    assert code == 0 and "4 mutations handled, 2 runs started" in err
    served_now = {
        x.store.workspace for x in served(build_app(workspace, Path(config), client=redis_client))
    }
    assert {workspace, a, b} <= served_now and dm not in served_now
    assert sorted(r.json["decided"] for r in hook.requests) == ["mysql", "postgres"]
    for name in (a, b):
        code, out, _ = run(capsys, name, "--config", config, "rules", "why", "test.last")
        assert code == 0 and "derived by rule notify from decision.db" in out
    code, _, _ = run(capsys, dm, "--config", config, "rules", "why", "test.last")
    assert code == 1  # no rule ran in the DM's workspace


def test_workspaces_lists_tenants_with_their_last_activity(
    capsys: pytest.CaptureFixture[str],
    redis_client: Redis,
    tmp_path: Path,
    hook: WebhookServer,
    tenants: tuple[str, str, str],
    workspace: str,
) -> None:
    a, b, dm = tenants
    config = config_for(tmp_path, hook, a, b)
    app = build_app(workspace, Path(config), client=redis_client)
    seen = Workspaces(app, use_env=False)
    seen.app(Tenant("slack", "T0AAA", a, configured=True))
    seen.app(Tenant("discord", "dm-140000000000000077", dm, private=True))
    code, out, _ = run(capsys, workspace, "--config", config, "workspaces")
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert code == 0 and {a, b, dm} <= set(lines)
    assert "slack team T0AAA" in lines[a] and "last active 20" in lines[a]
    assert "slack team T0BBB" in lines[b] and "never active" in lines[b]
    assert "direct messages of user 140000000000000077" in lines[dm] and "no rules" in lines[dm]
    code, out, _ = run(capsys, workspace, "--config", config, "workspaces", "--json")
    records = {r["workspace"]: r for r in map(json.loads, out.splitlines())}
    assert records[a]["rules"] is True and records[dm]["private"] is True
    assert records[b]["lastActiveMs"] is None


def test_workspaces_lists_each_that_holds_data_beside_the_configured_ones(
    capsys: pytest.CaptureFixture[str],
    redis_client: Redis,
    tmp_path: Path,
    hook: WebhookServer,
    tenants: tuple[str, str, str],
    workspace: str,
) -> None:
    """The issue's case: a workspace written with ``--workspace`` and in no config, nor
    reached by any event, was missing ("No workspace yet" beside two with data)."""
    a, b, _ = tenants
    config = config_for(tmp_path, hook, a, b)
    written = f"rulesdemo-{uuid.uuid4().hex[:8]}"
    try:
        argv = ["state", "set", "decision.db", "postgres", "--actor", "user:x"]
        assert run(capsys, written, *argv)[0] == 0
        code, out, err = run(capsys, workspace, "--config", config, "workspaces")
        lines = {line.split()[0]: line for line in out.splitlines()}
        assert code == 0 and not err and {a, b, written} <= set(lines)
        assert "configured" in lines[a] and "slack team T0AAA" in lines[a]
        assert "data only" in lines[written] and "holds data only" in lines[written]
        assert workspace not in lines  # the CLI's own, opened but empty: nothing to list
        code, out, _ = run(capsys, workspace, "--config", config, "workspaces", "--json")
        records = {r["workspace"]: r for r in map(json.loads, out.splitlines())}
        assert records[written] | {"lastActiveMs": None} == {
            "workspace": written,
            "kind": "data only",
            "configured": False,
            "holdsData": True,
            "platform": None,
            "tenant": None,
            "private": False,
            "rules": False,
            "lastActiveMs": None,
        }
        assert records[a]["configured"] is True and records[a]["holdsData"] is False
    finally:
        delete_workspace(redis_client, written)


@pytest.fixture
def fresh(redis_client: Redis) -> Iterator[tuple[str, str, str]]:
    """Three workspaces nothing but this test writes, removed afterwards."""
    names = tuple(f"active-{i}-{uuid.uuid4().hex[:8]}" for i in range(3))
    yield names
    for name in names:
        delete_workspace(redis_client, name)


def test_a_console_turn_or_a_cli_write_is_the_workspaces_last_activity(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    redis_client: Redis,
    fresh: tuple[str, str, str],
    workspace: str,
) -> None:
    """No platform event reaches a workspace the console or the CLI writes: it showed "never
    active" after turns and commits. A refused write counts too; a workspace whose streams
    were only opened (the rules' consumer group waits on its empty log) does not."""
    set_by_cli, talked, refused = fresh
    before = server_ms(redis_client, WorkspaceKeys(workspace).versions)
    set_db = ("state", "set", "decision.db", "postgres", "--actor", "user:x")
    assert run(capsys, set_by_cli, *set_db)[0] == 0
    assert console(capsys, monkeypatch, talked, ["we need to pick a database"])[0] == 0
    protected = ("state", "set", "stream.state", "off", "--actor", "user:x")
    assert run(capsys, refused, *protected)[0] == 1
    assert run(capsys, workspace, "worker", "--burst")[0] == 0  # opens its empty log
    after = server_ms(redis_client, WorkspaceKeys(workspace).versions)
    code, out, _ = run(capsys, workspace, "workspaces", "--json")
    records = {r["workspace"]: r for r in map(json.loads, out.splitlines())}
    assert code == 0 and workspace not in records  # (holds no data: not listed)
    for name in fresh:
        assert before <= records[name]["lastActiveMs"] <= after, (name, records[name])
    code, out, _ = run(capsys, workspace, "workspaces")
    lines = {line.split()[0]: line for line in out.splitlines()}
    for name in fresh:
        shown = datetime.fromtimestamp(records[name]["lastActiveMs"] / 1000, UTC)
        assert lines[name].endswith("last active " + shown.strftime("%Y-%m-%d %H:%M:%SZ"))
    assert last_written(redis_client, workspace) == 0  # an empty log is no activity
