"""``deliberate why KEY`` with several changes of KEY behind it: the rules' evaluations and
actions come under the mutation that triggered them (its version, who made it, when),
newest first, in words and in ``--json`` (which keeps its earlier fields); a planted record
naming a mutation the log does not hold, or another's log id, is shown apart, never under
a real mutation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from redis import Redis

from rules.keys import RuleKeys
from tests.bot.cli.process import run
from tests.bot.cli.test_rules_cli import rules_config
from tests.servers.webhook import WebhookServer


@pytest.fixture
def hook() -> Iterator[WebhookServer]:
    with WebhookServer() as server:
        yield server


def test_why_groups_the_rules_work_by_the_mutation_that_triggered_it(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    hook: WebhookServer,
    workspace: str,
    redis_client: Redis,
) -> None:
    base = ("--config", str(rules_config(tmp_path, hook)))
    assert run(capsys, workspace, *base, "worker", "--burst")[0] == 0  # the consumer group
    made = []
    for value, who in (("postgres", "user:alice"), ("mysql", "user:bob")):
        argv = ("state", "set", "decision.db", value, "--actor", who, "--json")
        code, out, _ = run(capsys, workspace, *base, *argv)
        assert code == 0
        made.append(json.loads(out))
    assert run(capsys, workspace, *base, "worker", "--burst")[0] == 0
    planted = {"rule": "ghost", "fired": False, "why": "planted", "op": "set"}
    evaluations = RuleKeys(workspace).evaluations
    for mutation_id, log_id in (("nosuch", "not-a-log-id"), ("another", made[0]["logId"])):
        data = json.dumps({**planted, "mutationId": mutation_id, "logId": log_id})
        fields = {"corr": "c", "key": "decision.db", "event": "evaluated", "data": data}
        redis_client.xadd(evaluations, fields)  # type: ignore[arg-type]

    code, out, _ = run(capsys, workspace, *base, "why", "decision.db", "--limit", "50", "--json")
    said = json.loads(out)
    assert code == 0 and said["lastMutation"]["version"] == 2
    assert len(said["evaluations"]) == 2 * 3 + 2  # each: evaluated, and its two steps
    groups = said["mutations"]
    assert [(g["version"], g["actor"], g["mutationId"]) for g in groups] == [
        (2, "user:bob", made[1]["mutationId"]),
        (1, "user:alice", made[0]["mutationId"]),
        (None, None, "another"),  # (the newer planted record first)
        (None, None, "nosuch"),
    ]
    for group, change in zip(groups, made[::-1], strict=False):  # newest first
        assert group["ts"] == change["entry"]["updatedAt"] and group["logId"] == change["logId"]
        rows = group["evaluations"]
        assert [r["event"] for r in rows] == ["evaluated", "action.done", "action.done"]
        assert {r["data"]["mutationId"] for r in rows} == {change["mutationId"]}
    assert sorted(r["id"] for g in groups for r in g["evaluations"]) == sorted(
        r["id"] for r in said["evaluations"]
    )

    code, out, _ = run(capsys, workspace, *base, "why", "decision.db", "--limit", "50")
    lines = out.splitlines()
    headings = [line for line in lines if line.startswith("  ") and not line.startswith("    ")]
    assert code == 0 and headings[1:] == [
        f"  v{v} set by {who} at {_utc(change['entry']['updatedAt'])}, "
        f"mutation {change['mutationId']}:"
        for v, who, change in ((2, "user:bob", made[1]), (1, "user:alice", made[0]))
    ] + [
        "  mutation another (no longer in the log):",
        "  mutation nosuch (no longer in the log):",
    ]
    under = lines[lines.index(headings[1]) + 1 : lines.index(headings[2])]
    assert [line.split()[0] for line in under] == ["evaluated", "action.done", "action.done"]
    assert all(line.startswith("    ") for line in under)


def _utc(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%SZ")
