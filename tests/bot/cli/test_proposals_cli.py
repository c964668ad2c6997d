"""``deliberate proposals [--all] [--json]``, ``deliberate revert`` and ``deliberate trace``
of a proposal, through the real CLI on a real Redis: what waits and for whom, what became of
the rest, an undo that restores or is refused, and a proposal's whole life in causal order.
People approve and discard through the gateway, or by clicking in a console."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import Pending
from core.state.commit_result import Committed
from tests.bot.cli.process import run
from tests.bot.test_console_lifecycle import looking, propose
from tests.conftest import write_config
from tests.factories import actor, mutation
from tests.rules.rig import config_text

RULE = """
  - id: remember
    when: {key: "decision.*", op: set}
    then:
      - mutate: {op: set, key: "test.last", value: "{{ mutation.key }}"}
"""
BOB, CAROL = actor("user:bob"), actor("user:carol")
MOMENT = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"  # a deadline (``core.time_phrases``)
JUST_NOW = r"\((now|\d+ s ago)\)"  # a moment of the test's, read by the command a moment later


def resolved_at(app: App, proposal_id: str) -> str:
    """When the proposal was resolved, in UTC to the second, as a pattern."""
    proposal = app.gateway.proposals.get(proposal_id)
    assert proposal is not None and proposal.resolved_at is not None
    moment = datetime.fromtimestamp(proposal.resolved_at / 1000, UTC)
    return re.escape(moment.strftime("%Y-%m-%d %H:%M:%S UTC"))


def _ages(text: str) -> str:
    """``text`` with each span of time ("0s ago", "3m", "in 40 s", "2 h 5 min") as ``T``."""
    return re.sub(r"\b\d+ ?(?:min|s|m|h|d)\b", "T", text)


def lifecycle_config(tmp_path: Path, approval: str) -> str:
    """The shipped config with one rule (``remember``), and ``approval: APPROVAL`` on
    ``decision.*``."""
    rule = '    - pattern: "decision.*"\n'
    text = config_text(RULE).replace(rule, f"{rule}      approval: {approval}\n")
    return str(write_config(tmp_path, text))


@pytest.fixture
def config(tmp_path: Path) -> str:
    return lifecycle_config(tmp_path, "{people: true, quorum: 2, four_eyes: true}")


@pytest.fixture
def team(config: str, redis_client: Redis, workspace: str) -> App:
    return build_app(workspace, Path(config), client=redis_client)


def cli(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, *argv: str
) -> tuple[int, str, str]:
    return run(capsys, workspace, "--config", config, *argv)


def proposed(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, key: str, value: str, who: str
) -> str:
    code, out, _ = cli(
        capsys, workspace, config, "state", "set", key, value, "--actor", who, "--json"
    )
    assert code == 0 and json.loads(out)["outcome"] == "pending", out
    return str(json.loads(out)["proposalId"])


def blocks(out: str) -> dict[str, list[str]]:
    """Each proposal's lines, by its id (blank lines between proposals)."""
    return {b.split()[0]: b.splitlines() for b in out.strip().split("\n\n")}


def test_proposals_lists_what_waits_and_for_whom(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    assert cli(capsys, workspace, config, "proposals")[1] == "no proposal waits for anyone\n"
    assert cli(capsys, workspace, config, "proposals", "--all")[1] == "no proposals are kept\n"
    db = proposed(capsys, workspace, config, "decision.db", "postgres", "user:al")
    stream = proposed(capsys, workspace, config, "stream.state", "off", "agent:llm")
    assert isinstance(team.gateway.apply_proposal(db, BOB, revision=0), Pending)
    code, out, _ = cli(capsys, workspace, config, "proposals")
    assert code == 0
    shown = blocks(out)
    assert list(shown) == [db, stream]  # soonest deadline first
    first, made, approvals, awaits = shown[db]
    assert first == f"{db}  set decision.db = postgres"
    assert re.fullmatch(
        rf"  proposed and requested by user:al, \d+s ago; expires at {MOMENT} \(in 24 h\)", made
    )
    assert approvals == "  approvals 1 of 2 (user:bob); four eyes"
    assert awaits == (
        "  awaits 1 more approval by a user, moderator or admin, "
        "not user:al (asked for it), not user:bob"
    )
    assert shown[stream][0] == f"{stream}  set stream.state = off"
    assert shown[stream][1].startswith("  proposed by agent:llm, ")
    assert shown[stream][2:] == [
        "  approvals 0 of 1",
        "  awaits 1 more approval by a moderator or admin",
    ]
    code, out, _ = cli(capsys, workspace, config, "proposals", "--limit", "1")
    assert list(blocks(out)) == [db]


def test_proposals_all_says_who_resolved_each_and_why(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    scene = proposed(capsys, workspace, config, "scene.name", "BRB", "agent:llm")
    db = proposed(capsys, workspace, config, "decision.db", "postgres", "user:al")
    team.gateway.discard_proposal(scene, BOB, "we are live   right now")
    team.gateway.apply_proposal(db, BOB, revision=0)
    applied = team.gateway.apply_proposal(db, CAROL, revision=0)
    assert isinstance(applied, Committed)
    due = MutationGateway(team.store, team.policy, proposal_expiry_ms=0)
    late = due.propose(mutation("set", "scene.name", "Live", "agent:llm"))
    assert isinstance(late, Pending) and due.expire_due() == 1
    code, out, _ = cli(capsys, workspace, config, "proposals")
    assert (code, out) == (0, "no proposal waits for anyone\n")
    code, out, _ = cli(capsys, workspace, config, "proposals", "--all")
    shown = blocks(out)
    assert set(shown) == {scene, db, late.proposal.id}
    assert shown[scene][0] == f"{scene}  set scene.name = BRB  [discarded]"
    discarded = resolved_at(team, scene)
    assert re.fullmatch(
        rf"  discarded by user:bob at {discarded} {JUST_NOW}: we are live right now",
        shown[scene][3],
    ), shown[scene][3]
    assert shown[db][2] == "  approvals 2 of 2 (user:bob, user:carol); four eyes"
    applied_at = resolved_at(team, db)
    assert re.fullmatch(
        rf"  applied by user:carol at {applied_at} {JUST_NOW} \(v1, mutation apply-{db}\)",
        shown[db][3],
    ), shown[db][3]
    assert re.fullmatch(
        rf"  expired at {MOMENT} \((now|\d+ s ago)\): nobody applied it in time",
        shown[late.proposal.id][3],
    )


def test_proposals_json_is_the_proposal_with_its_deadline_and_whom_it_awaits(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    db = proposed(capsys, workspace, config, "decision.db", "postgres", "user:al")
    scene = proposed(capsys, workspace, config, "scene.name", "BRB", "agent:llm")
    team.gateway.discard_proposal(scene, BOB, "not now")
    code, out, _ = cli(capsys, workspace, config, "proposals", "--json")
    assert code == 0
    [waiting] = [json.loads(line) for line in out.splitlines()]
    assert (waiting["id"], waiting["status"], waiting["quorum"], waiting["fourEyes"]) == (
        db,
        "pending",
        2,
        True,
    )
    assert waiting["requestedBy"]["id"] == "al" and waiting["deadline"] == waiting["expiresAt"]
    assert waiting["awaits"] == {
        "roles": ["user", "moderator", "admin"],
        "more": 2,
        "not": ["user:al"],
    }
    _, out, _ = cli(capsys, workspace, config, "proposals", "--all", "--json")
    every: list[dict[str, Any]] = [json.loads(line) for line in out.splitlines()]
    [gone] = [p for p in every if p["id"] == scene]
    assert (gone["status"], gone["reason"], gone["resolvedBy"]["id"]) == (
        "discarded",
        "not now",
        "bob",
    )
    assert "awaits" not in gone


def test_revert_restores_the_value_before_and_is_refused_once_the_key_moved_on(
    capsys: pytest.CaptureFixture[str], workspace: str
) -> None:
    def write(value: str) -> str:
        code, out, _ = run(
            capsys, workspace, "state", "set", "decision.db", value, "--actor", "user:al", "--json"
        )
        assert code == 0
        return str(json.loads(out)["mutationId"])

    first, second = write("postgres"), write("mysql")
    code, out, _ = run(capsys, workspace, "revert", second, "--as", "user:bo")
    assert code == 0
    restored, revert_line = out.splitlines()
    assert restored.startswith(
        f'reverted {second}: restored decision.db = "postgres"  (v3, user:bo, '
    )
    assert revert_line == f"  revert mutation revert-{second}"
    code, out, _ = run(capsys, workspace, "revert", second, "--actor", "user:bo")
    assert code == 0 and out.splitlines()[0].endswith("(already reverted: first result returned)")
    assert len(run(capsys, workspace, "log")[1].splitlines()) == 3  # committed once

    code, out, _ = run(capsys, workspace, "revert", first, "--as", "user:al")
    assert code == 1
    refused, now = out.splitlines()
    assert refused == (
        "not reverted (conflict): decision.db changed since that change (v1 then, v3 now): "
        "nothing was reverted"
    )
    assert now.startswith('  now: decision.db = "postgres"  (v3, user:bo, ')
    code, out, _ = run(capsys, workspace, "revert", second, "--as", "agent:llm", "--json")
    assert code == 1 and json.loads(out)["reason"] == "forbidden"
    code, out, _ = run(capsys, workspace, "revert", "no-such-mutation", "--as", "user:al")
    assert code == 1 and out.startswith("not reverted (not_found): no committed mutation")
    assert run(capsys, workspace, "revert", second)[0] == 2  # who reverts is not optional

    code, out, _ = run(
        capsys, workspace, "state", "set", "decision.new", "x", "--actor", "user:al", "--json"
    )
    created = json.loads(out)["mutationId"]
    code, out, _ = run(capsys, workspace, "revert", created, "--as", "user:al")
    assert code == 0 and out.splitlines()[0] == (
        f"reverted {created}: deleted decision.new (v2): it was not set before"
    )


def labels(out: str) -> list[str]:
    """The label column of each step line of a trace (the header lines have none)."""
    return [
        line.split()[1] for line in out.splitlines() if re.match(r"\d\d:\d\d:\d\d\.\d{3}  ", line)
    ]


def test_trace_of_a_proposal_shows_its_life_from_the_proposal_to_the_rules(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    pid = proposed(capsys, workspace, config, "decision.db", "postgres", "agent:llm")
    assert isinstance(team.gateway.apply_proposal(pid, BOB, revision=0), Pending)
    assert isinstance(
        team.gateway.apply_proposal(pid, BOB, revision=0), Pending
    )  # not counted twice
    assert isinstance(team.gateway.apply_proposal(pid, CAROL, revision=0), Committed)
    assert cli(capsys, workspace, config, "worker", "--burst")[0] == 0
    code, out, _ = cli(capsys, workspace, config, "trace", pid)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"proposal {pid}  set decision.db = postgres  [applied]"
    assert labels(out) == [
        "proposed",
        "approved",
        "approved",
        "applied",
        "rule",
        "mutation",
        "rule.action.done",
    ]
    steps = lines[4:]
    assert (
        f"set decision.db by agent:llm as proposal {pid}: awaits a person with the right "
        "role; expires at " in steps[0]
    )
    assert steps[1].endswith(
        "set decision.db: approved by user:bob (1 of 2); awaits 1 more approval"
    )
    assert "user:bob had approved it already (not counted again)" in steps[2]
    assert 'set decision.db "postgres" -> v1 by user:carol' in steps[3]
    assert f"proposal {pid}, approved by user:bob, user:carol; mutation apply-{pid}" in steps[3]
    assert "remember on decision.db: fired" in steps[4]
    assert "rule.action.done  remember step 1 (mutate test.last)" in steps[6]
    # the id of the mutation that applied it names the same proposal (the two are printed
    # moments apart: an age such as "0s ago" may have become "1s ago" in between)
    again = cli(capsys, workspace, config, "trace", f"apply-{pid}")[1]
    assert _ages(again) == _ages(out)
    code, out, _ = cli(capsys, workspace, config, "trace", pid, "--json")
    header, *rows = [json.loads(line) for line in out.splitlines()]
    assert header["event"] == "proposal" and header["data"]["id"] == pid
    assert [r["event"] for r in rows][:4] == ["decision", "decision", "decision", "mutation"]


def test_trace_of_a_proposal_discarded_in_the_console_shows_the_click_and_the_reason(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    propose(team, "user:al")
    bob, _, shown = looking(team, "user:bob")
    bob.handle(f"/reject {shown['DiscardProposal']} too costly")
    [proposal] = team.gateway.proposals.listed(resolved=True)
    code, out, _ = cli(capsys, workspace, config, "trace", proposal.id)
    assert code == 0
    steps = [line for line in out.splitlines() if re.match(r"\d\d:\d\d:\d\d\.\d{3}  ", line)]
    assert labels(out)[:3] == ["action_clicked", "proposed", "action_done"]
    [clicked] = [s for s in steps if "clicked DiscardProposal" in s]
    [discarded] = [s for s in steps if s.split()[1] == "discarded"]
    assert steps.index(clicked) < steps.index(discarded)
    assert discarded.endswith("by user:bob: too costly")


def test_trace_of_a_proposal_the_sweep_expired(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    due = MutationGateway(team.store, team.policy, proposal_expiry_ms=0)
    pending = due.propose(mutation("set", "scene.name", "BRB", "agent:llm"))
    assert isinstance(pending, Pending) and due.expire_due() == 1
    code, out, _ = cli(capsys, workspace, config, "trace", pending.proposal.id)
    assert code == 0 and labels(out) == ["proposed", "expired"]
    assert "set scene.name (found by the worker's sweep): this proposal expired at " in out
    assert cli(capsys, workspace, config, "trace", "nothing-has-this-id")[0] == 1


def test_trace_of_a_proposal_ends_with_the_revert_of_its_commit(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    team.gateway.propose(mutation("set", "scene.name", "Live", "user:sam"))
    pid = proposed(capsys, workspace, config, "scene.name", "BRB", "agent:llm")
    assert isinstance(team.gateway.apply_proposal(pid, BOB, revision=0), Committed)
    code, out, _ = cli(capsys, workspace, config, "revert", f"apply-{pid}", "--as", "user:carol")
    assert code == 0 and out.startswith(f'reverted apply-{pid}: restored scene.name = "Live"  (v3')
    code, out, _ = cli(capsys, workspace, config, "trace", pid)
    assert labels(out) == ["proposed", "applied", "reverted"]
    reverted = out.splitlines()[-1]
    assert 'set scene.name "Live" -> v3 by user:carol' in reverted
    assert reverted.endswith(f"; reverts apply-{pid}; mutation revert-apply-{pid}")


def test_an_undo_that_waits_for_approval_is_traced_as_a_proposal_of_its_own(
    capsys: pytest.CaptureFixture[str], workspace: str, tmp_path: Path, redis_client: Redis
) -> None:
    config = lifecycle_config(tmp_path, "{people: true}")
    app = build_app(workspace, Path(config), client=redis_client)
    alice, _, shown = propose(app)
    alice.handle(f"/edit {shown['EditProposal']} postgres 16")
    undo = next(b for b in alice.buttons if b.action == "RevertMutation")
    alice.handle(str(alice.numbers.of(undo)))  # the revert waits for approval too
    alice.handle("/reject keep postgres 16")
    [first] = [p for p in app.gateway.proposals.listed(resolved=True) if p.status == "applied"]
    code, out, _ = cli(capsys, workspace, config, "trace", first.id)
    assert code == 0
    steps = labels(out)
    assert steps.count("proposed") == 2 and steps[-1] == "discarded"  # its own, then the undo's
    assert steps.index("applied") < len(steps) - 1 - steps[::-1].index("proposed")
    discarded = out.splitlines()[-1]
    assert discarded.endswith(
        f"(proposal revert-apply-{first.id}) delete {first.mutation.key} by user:alice: "
        "keep postgres 16"
    )
