"""``rules test`` says which steps the worker would skip for an unset variable, and
``trace`` lists one correlation's steps in causal order even when they share a millisecond."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from redis import Redis

from bot.reports.trace import causal
from core.state.keys import WorkspaceKeys
from rules.keys import RuleKeys
from tests.bot.cli.process import run
from tests.conftest import write_config
from tests.rules.rig import config_text

RULES = """
  - id: announce
    when: {key: "decision.*", op: set}
    then:
      - action: http.post
        args: {url: "${TEST_HOOK_URL:-}", json: {decided: "{{ mutation.value }}"}}
      - mutate: {op: set, key: "test.last", value: "{{ mutation.key }}"}
  - id: quiet
    when: {key: "decision.*", op: set}
    then:
      - action: http.post
        args: {url: "${TEST_HOOK_URL:-}", json: {}}
"""
MUTATION = '{"op": "set", "key": "decision.db", "value": "postgres"}'


def test_rules_test_marks_a_step_the_worker_would_skip_and_names_the_variable(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    workspace: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TEST_HOOK_URL", raising=False)
    config = str(write_config(tmp_path, config_text(RULES)))
    argv = ("--config", config, "rules", "test", "--mutation", MUTATION, "--state", "{}")
    code, out, _ = run(capsys, workspace, *argv)
    assert code == 0
    assert out.splitlines() == [
        "announce: WOULD RUN (the trigger and the condition hold)",
        "  step 1: http.post: WOULD SKIP: TEST_HOOK_URL is not set",
        '  step 2: set test.last "decision.db"',
        "quiet: WOULD SKIP every step (the trigger and the condition hold)",
        "  step 1: http.post: WOULD SKIP: TEST_HOOK_URL is not set",
    ]
    code, out, _ = run(capsys, workspace, *argv, "--json")
    announce = json.loads(out.splitlines()[0])
    assert [step.get("skipped") for step in announce["steps"]] == [
        "TEST_HOOK_URL is not set",
        None,
    ]
    monkeypatch.setenv("TEST_HOOK_URL", "http://127.0.0.1:9/hook")
    code, out, _ = run(capsys, workspace, *argv)
    assert "WOULD SKIP" not in out and out.startswith("announce: WOULD RUN")


def test_trace_lists_a_click_in_causal_order_within_one_millisecond(
    capsys: pytest.CaptureFixture[str], workspace: str, redis_client: Redis
) -> None:
    code, out, _ = run(
        capsys, workspace, "state", "set", "decision.db", "pg", "--actor", "user:al", "--json"
    )
    committed = json.loads(out)
    corr, ms = str(committed["correlationId"]), str(committed["logId"]).split("-")[0]
    keys = WorkspaceKeys(workspace)
    actor = {"kind": "user", "id": "al", "platform": "local", "roles": []}

    def trace(seq: int, event: str, data: dict[str, object]) -> None:
        redis_client.xadd(
            keys.trace,
            {"corr": corr, "session": "s1", "event": event, "data": json.dumps(data)},
            id=f"{ms}-{seq}",
        )

    # what the runtime and the worker write, each in its own stream, in the same millisecond
    # as the commit: the click, its outcome, the beats, a rule fired and its step done
    click = {
        "actor": actor,
        "action": "ConfirmCurrent",
        "target_id": "c1",
        "expected_version": 1,
        "click_id": "k1",
    }
    trace(0, "action_clicked", click)
    trace(1, "action_done", {"result": {"outcome": "committed", "message": "Committed"}})
    evaluation = {"fired": [], "checks": [], "mode": "refining"}
    redis_client.xadd(
        keys.beat_history,
        {"session": "s1", "correlation_id": corr, "evaluation": json.dumps(evaluation)},
        id=f"{ms}-0",
    )
    rule_keys = RuleKeys(workspace)
    for seq, (event, data) in enumerate(
        [
            ("evaluated", {"rule": "notify", "fired": True, "why": "it holds"}),
            ("action.done", {"rule": "notify", "step": 0, "do": "http.post", "result": {}}),
        ]
    ):
        redis_client.xadd(
            rule_keys.evaluations,
            {"corr": corr, "key": "decision.db", "event": event, "data": json.dumps(data)},
            id=f"{ms}-{seq}",
        )
    code, out, _ = run(capsys, workspace, "trace", corr)
    assert code == 0
    events = [line.split()[1] for line in out.splitlines()]
    assert events == [
        "action_clicked",
        "mutation",
        "action_done",
        "beats",
        "rule",
        "rule.action.done",
    ]


def test_a_proposal_waits_before_the_commit_that_applies_it_within_one_millisecond() -> None:
    # the last approver's commit and the approval before it share a millisecond: the
    # mutation log is merged before the decision log, yet the approval came first
    actor = {"kind": "user", "id": "carol", "platform": "local", "roles": []}
    applied = {"ms": 5, "event": "mutation", "data": {"actor": actor, "meta": {"proposal": "p1"}}}
    waits = {"ms": 5, "event": "decision", "data": {"outcome": "pending", "proposal_id": "p1"}}
    refused = {"ms": 5, "event": "decision", "data": {"outcome": "rejected"}}
    said = {"ms": 5, "event": "user_said", "data": {}}
    assert causal([applied], [waits, refused], [said]) == [said, waits, applied, refused]
