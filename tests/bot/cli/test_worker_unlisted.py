"""A team no config lists (``any_team``: an app teams install) gets the worker's upkeep: its
changes for a while revert, its proposals expire and are told and closed, its log is
compacted. No rule runs there, as the tenancy says; a listed team keeps its rules. Run on a
redis-server of the test's own, so that the workspace directory holds only its teams."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis import Redis

from bot.app import build_app
from bot.chat.workspaces import WorkspaceDirectory
from bot.cli.worker import FIND_EVERY_SEC, Unlisted
from core.config.tenants import Tenant
from core.state.keys import WORKSPACE_DIRECTORY
from tests.bot.cli.process import run
from tests.conftest import write_config
from tests.factories import mutation
from tests.rules.rig import config_text
from tests.servers.redis_process import RedisProcess

NOTE = """
  - id: note
    when: {key: "decision.*", op: set}
    then:
      - mutate: {op: set, key: "test.ran", value: "{{ mutation.key }}"}
"""
TENANTS = "tenants:\n  slack:\n    any_team: true\n    teams:\n      - id: T0LISTED\n"


@pytest.fixture
def configs(tmp_path: Path) -> list[Path]:
    return [
        write_config(tmp_path, config_text(NOTE), "rules.yaml"),
        write_config(tmp_path, TENANTS, "tenants.yaml"),
    ]


def test_the_burst_worker_keeps_up_an_unlisted_team_and_runs_no_rule_there(
    capsys: pytest.CaptureFixture[str], own_redis: RedisProcess, configs: list[Path]
) -> None:
    client = Redis.from_url(own_redis.url, decode_responses=True)
    base = build_app("ops", configs, client=client)
    directory = WorkspaceDirectory(client)
    installed = base.for_workspace("slack-T0INSTALLED", rules=False)
    directory.touch(Tenant("slack", "T0INSTALLED", "slack-T0INSTALLED"))
    directory.touch(Tenant("slack", "T0LISTED", "slack-T0LISTED", configured=True))
    listed = base.for_workspace("slack-T0LISTED")
    for app in (installed, listed):
        app.gateway.propose(mutation("set", "decision.w", "a", "user:al"))
        done = app.gateway.propose(mutation("set", "decision.w", "b", "user:al", for_sec=60))
        client.zadd(app.store.keys.timed, {done.mutation.id: 1})  # its deadline is past

    argv = ["--redis-url", own_redis.url, *(f"--config={path}" for path in configs)]
    code, _, err = run(capsys, "ops", *argv, "worker", "--burst")
    assert code == 0, err
    progress, summary = err.splitlines()
    assert progress.startswith("deliberate worker --burst: rules on ops, slack-T0LISTED; ")
    assert summary.endswith("; upkeep in 1 unlisted")
    for app in (installed, listed):  # both reverted at their deadline
        assert app.store.get("decision.w").value == "a"  # type: ignore[union-attr]
    assert installed.store.get("test.ran") is None  # no rule where nobody listed the team
    assert listed.store.get("test.ran").value == "decision.w"  # type: ignore[union-attr]


def test_a_team_installed_while_the_worker_runs_is_found_at_the_next_look(
    own_redis: RedisProcess, configs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    client = Redis.from_url(own_redis.url, decode_responses=True)
    base = build_app("ops", configs, client=client)
    clock = [1000.0]
    monkeypatch.setattr("bot.cli.worker.time.monotonic", lambda: clock[0])
    unlisted = Unlisted(base)
    unlisted.step()
    assert unlisted.chores == {}
    WorkspaceDirectory(client).touch(Tenant("slack", "T0LATER", "slack-T0LATER"))
    unlisted.step()
    assert unlisted.chores == {}  # looked for once a minute, not at every pass
    clock[0] += FIND_EVERY_SEC
    unlisted.step()
    assert list(unlisted.chores) == ["slack-T0LATER"]
    names = [chore.name for chore in unlisted.chores["slack-T0LATER"]]
    assert "revert changes made for a while at their deadline" in names
    assert "expire proposals, tell their requesters, close their messages, escalate" in names


def test_a_directory_entry_that_names_no_workspace_holds_back_no_other(
    own_redis: RedisProcess, configs: list[Path]
) -> None:
    """An entry no workspace can have (written there by hand, or by an older release) is
    logged and skipped: the teams after it (it is the newest: read first) still get their
    upkeep."""
    client = Redis.from_url(own_redis.url, decode_responses=True)
    base = build_app("ops", configs, client=client)
    directory = WorkspaceDirectory(client)
    record = (
        '{"platform": "slack", "tenant": "T0", "private": false, "lastActiveMs": 9999999999999}'
    )
    client.hset(WORKSPACE_DIRECTORY, "-no such name-", record)
    directory.touch(Tenant("slack", "T0GOOD", "slack-T0GOOD"))
    unlisted = Unlisted(base)
    unlisted.step()
    assert list(unlisted.chores) == ["slack-T0GOOD"]
