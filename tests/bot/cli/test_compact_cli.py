"""``deliberate compact``, and what ``log``, ``replay``, ``rules why`` and ``/deliberate``
say once history was compacted."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis import Redis

from bot.app import App
from bot.chat.answers import answer
from core.state.keys import WorkspaceKeys
from rules.keys import CONSUMER_GROUP, RuleKeys
from tests.bot.cli.process import run
from tests.conftest import write_config
from tests.factories import mutation
from tests.rules.rig import config_text

ASKER = "slack:U0ASKER"  # who asks /deliberate (each counted in their workspace)


def commit_many(app: App, n: int) -> None:
    for i in range(n):
        outcome = app.gateway.propose(mutation("set", "decision.visits", f"option {i}", "user:ann"))
        assert outcome.name == "committed", outcome
    app.gateway.propose(mutation("set", "decision.db", "postgres", "user:ann"))


def handled(redis: Redis, app: App) -> None:
    """What the rules' consumer does: read every record and acknowledge it."""
    keys = app.store.keys
    reply = redis.xreadgroup(CONSUMER_GROUP, "test", {keys.log: ">"}, count=10_000)
    for log_id, _ in reply[0][1] if reply else []:
        redis.xack(keys.log, CONSUMER_GROUP, log_id)


def test_compact_trims_and_the_readers_say_so(
    capsys: pytest.CaptureFixture[str], redis_client: Redis, app: App, workspace: str
) -> None:
    commit_many(app, 12)
    code, out, _ = run(capsys, workspace, "compact", "--keep-records", "3")
    assert code == 0
    assert "nothing to compact" in out and "consumer group 'rules'" in out
    assert "is the worker running" in out
    handled(redis_client, app)
    code, out, _ = run(capsys, workspace, "compact", "--keep-records", "3")
    assert code == 0 and "compacted 10 records through" in out and "log keeps 3" in out

    code, out, err = run(capsys, workspace, "log", "--limit", "50")
    assert code == 0 and len(out.splitlines()) == 3
    assert "was compacted" in err and "10 records" in err
    code, out, err = run(capsys, workspace, "log", "--limit", "3")  # exactly what is left
    assert code == 0 and len(out.splitlines()) == 3 and "was compacted" in err
    code, out, err = run(capsys, workspace, "log", "--limit", "2")
    assert code == 0 and "was compacted" not in err
    code, out, err = run(capsys, workspace, "log", "--key", "decision.visits")
    assert code == 0 and "-> v12" in out and "was compacted" in err

    code, out, _ = run(capsys, workspace, "replay", "--verify")
    assert code == 0 and "OK" in out
    code, _, err = run(capsys, workspace, "replay", "--verify", "--from-scratch")
    assert code == 2 and "compacted" in err and "from scratch is no longer possible" in err

    assert "was compacted" in answer(app, "log", asker=ASKER)
    assert "decision.db" in answer(app, "log decision.db", asker=ASKER)


def test_a_key_whose_every_record_was_compacted(
    capsys: pytest.CaptureFixture[str], redis_client: Redis, app: App, workspace: str
) -> None:
    app.gateway.propose(mutation("set", "decision.old", "mysql", "user:ann"))
    commit_many(app, 5)
    handled(redis_client, app)
    run(capsys, workspace, "compact", "--keep-records", "2")
    code, out, _ = run(capsys, workspace, "rules", "why", "decision.old")
    assert code == 1 and "no mutation in the log" in out and "was compacted" in out
    said = answer(app, "log decision.old", asker=ASKER)
    assert "No mutation of decision.old is left in the log" in said and "was compacted" in said
    assert "was compacted" in answer(app, "why decision.old", asker=ASKER)


def test_compact_without_retention_and_with_bad_arguments(
    capsys: pytest.CaptureFixture[str], app: App, workspace: str
) -> None:
    commit_many(app, 2)
    code, _, err = run(capsys, workspace, "compact", "--keep-days", "0")
    assert code == 2 and "--keep-days must be more than 0" in err
    code, _, err = run(capsys, workspace, "compact", "--keep-records", "0")
    assert code == 2
    code, out, _ = run(capsys, workspace, "compact", "--help")
    assert code == 0 and "retention" in out


def test_trace_says_when_history_was_compacted(
    capsys: pytest.CaptureFixture[str], redis_client: Redis, app: App, workspace: str
) -> None:
    first = mutation("set", "decision.db", "mysql", "user:ann")
    app.gateway.propose(first)
    code, out, _ = run(capsys, workspace, "trace", first.correlation_id)
    assert code == 0 and "decision.db" in out
    commit_many(app, 3)
    handled(redis_client, app)
    run(capsys, workspace, "compact", "--keep-records", "1")
    code, out, _ = run(capsys, workspace, "trace", first.correlation_id)
    assert code == 1 and "was compacted" in out


def test_the_worker_compacts_on_its_schedule_behind_its_own_cursor(
    capsys: pytest.CaptureFixture[str], redis_client: Redis, tmp_path: Path, workspace: str
) -> None:
    shipped = config_text("  []\n")
    text = shipped.replace(
        "    keep_records: null", "    keep_records: 4", 1
    )  # the shipped store.retention, keeping 4 records
    assert text != shipped
    config = str(write_config(tmp_path, text))
    for i in range(10):
        code, _, _ = run(
            capsys,
            workspace,
            "--config",
            config,
            "state",
            "set",
            "decision.db",
            f"v{i}",
            "--actor",
            "user:ann",
        )
        assert code == 0
    log = RuleKeys(workspace).log
    assert redis_client.xlen(log) == 10
    # and a proposal an older release stored without an expiry gets one
    kept_for_ever = WorkspaceKeys(workspace).proposal("old-one")
    redis_client.set(kept_for_ever, "{}")
    code, _, err = run(capsys, workspace, "--config", config, "worker", "--burst")
    assert code == 0
    assert redis_client.pttl(kept_for_ever) > 0
    assert redis_client.xlen(log) == 4
    assert "compacted 6 records" in err
    code, out, _ = run(capsys, workspace, "--config", config, "replay", "--verify")
    assert code == 0 and "OK" in out
