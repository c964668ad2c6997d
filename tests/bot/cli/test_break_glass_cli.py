"""Breaking the glass from the CLI: ``state set --break-glass REASON`` commits at once where
the key's writes wait for approval, ``proposals --break-glass`` lists it, ``--reviewed`` marks
it reviewed by someone else, ``proposals`` marks a proposal applied by breaking the glass; the
shipped ``announce_break_glass`` rule renders the post (and skips while its channel is unset).
Real Redis, the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from redis import Redis

from bot.app import build_app
from core.gateway.break_glass import BreakGlass
from core.state.commit_result import Committed
from tests.bot.cli.process import run
from tests.conftest import write_config
from tests.factories import actor

CONFIG = """
policy:
  break_glass: {role: moderator}
  keys:
    - pattern: "ops.*"
      approval: {people: true, quorum: 2}
"""


@pytest.fixture
def config(tmp_path: Path) -> str:
    return str(write_config(tmp_path, CONFIG))


def cli(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, *argv: str
) -> tuple[int, str, str]:
    return run(capsys, workspace, "--config", config, *argv)


def test_set_with_break_glass_then_listed_and_reviewed(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str
) -> None:
    code, out, _ = cli(
        capsys, workspace, config, "state", "set", "ops.mode", "safe", "--actor", "user:al"
    )
    assert code == 0 and out.startswith("pending: proposal")  # without the glass: it waits
    code, out, _ = cli(
        capsys,
        workspace,
        config,
        "state",
        "set",
        "ops.mode",
        "safe",
        "--actor",
        "user:al",
        "--break-glass",
        "outage",
    )
    assert code == 1 and "user:al does not hold the moderator role" in out
    code, out, _ = cli(
        capsys,
        workspace,
        config,
        "state",
        "set",
        "ops.mode",
        "safe",
        "--actor",
        "moderator:mo",
        "--break-glass",
        "  ",
    )
    assert code == 1 and "breaking the glass needs a reason" in out
    code, out, _ = cli(capsys, workspace, config, "proposals", "--break-glass")
    assert out.strip() == "no break-glass change awaits review"
    code, out, _ = cli(
        capsys,
        workspace,
        config,
        "state",
        "set",
        "ops.mode",
        "safe",
        "--actor",
        "moderator:mo",
        "--break-glass",
        "db on fire",
        "--json",
    )
    assert code == 0, out
    done = json.loads(out)
    code, out, _ = cli(capsys, workspace, config, "state", "get", "ops.mode", "--json")
    assert json.loads(out)["meta"]["breakGlass"] == {"by": "moderator:mo", "reason": "db on fire"}
    code, out, _ = cli(capsys, workspace, config, "proposals", "--break-glass")
    (line,) = out.splitlines()
    assert "set ops.mode (v1) by moderator:mo: db on fire" in line
    mutation_id = line.split()[0]
    assert mutation_id == done["mutationId"]
    code, _, err = cli(
        capsys, workspace, config, "proposals", "--reviewed", mutation_id, "--actor", "moderator:mo"
    )
    assert code == 1 and "moderator:mo broke the glass on ops.mode: someone else" in err
    code, out, _ = cli(
        capsys, workspace, config, "proposals", "--reviewed", mutation_id, "--actor", "user:bo"
    )
    assert code == 0 and out.strip() == f"reviewed {mutation_id} (user:bo)"
    code, out, _ = cli(capsys, workspace, config, "proposals", "--break-glass")
    assert out.strip() == "no break-glass change awaits review"
    code, out, _ = cli(capsys, workspace, config, "proposals", "--break-glass", "--all")
    assert out.strip().endswith("; reviewed by user:bo")


GLASS = {
    "op": "set",
    "key": "ops.mode",
    "value": "safe",
    "id": "m-glass",
    "actor": {"kind": "moderator", "id": "mo"},
    "meta": {"breakGlass": {"by": "moderator:mo", "reason": "db on fire"}},
}


def test_the_shipped_rule_announces_it(
    capsys: pytest.CaptureFixture[str],
    workspace: str,
    config: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    argv = ("rules", "test", "--state", "{}", "--json", "--mutation")
    monkeypatch.delenv("DELIBERATE_BREAKGLASS_CHANNEL", raising=False)
    code, out, _ = cli(capsys, workspace, config, *argv, json.dumps(GLASS))
    (report,) = [
        r for r in map(json.loads, out.splitlines()) if r["rule"] == "announce_break_glass"
    ]
    assert code == 0 and report["held"]
    assert report["steps"][0]["skipped"] == "DELIBERATE_BREAKGLASS_CHANNEL is not set"
    assert report["steps"][1]["skipped"] == "DELIBERATE_BREAKGLASS_DISCORD_CHANNEL is not set"
    monkeypatch.setenv("DELIBERATE_BREAKGLASS_CHANNEL", "C0GLASS")
    code, out, _ = cli(capsys, workspace, config, *argv, json.dumps(GLASS))
    (report,) = [
        r for r in map(json.loads, out.splitlines()) if r["rule"] == "announce_break_glass"
    ]
    step, discord = report["steps"]
    assert "skipped" in discord  # (its own channel: a Slack one means nothing there)
    assert step["action"] == "slack.postMessage" and "skipped" not in step
    assert step["args"]["text"] == (
        "Break-glass by moderator:mo: set ops.mode (v0), skipping approval. Reason: db on fire. "
        "Review it: deliberate proposals --break-glass, then --reviewed m-glass"
    )
    # on Discord too; the step pings no one (its connector also escapes what the template
    # puts in: tests/connectors), whatever the reason says
    monkeypatch.setenv("DELIBERATE_BREAKGLASS_DISCORD_CHANNEL", "123456789012345678")
    loud = {**GLASS, "meta": {"breakGlass": {"by": "moderator:mo", "reason": "@everyone now"}}}
    code, out, _ = cli(capsys, workspace, config, *argv, json.dumps(loud))
    (report,) = [
        r for r in map(json.loads, out.splitlines()) if r["rule"] == "announce_break_glass"
    ]
    discord = report["steps"][1]
    assert discord["action"] == "discord.sendMessage" and "skipped" not in discord
    assert discord["args"].get("mentions", []) == []
    assert "Reason: @everyone now." in discord["args"]["content"]
    plain = {k: v for k, v in GLASS.items() if k != "meta"}
    code, out, _ = cli(capsys, workspace, config, *argv, json.dumps(plain))
    (report,) = [
        r for r in map(json.loads, out.splitlines()) if r["rule"] == "announce_break_glass"
    ]
    assert not report["held"]


def test_proposals_marks_a_proposal_applied_by_breaking_the_glass(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, redis_client: Redis
) -> None:
    code, out, _ = cli(
        capsys, workspace, config, "state", "set", "ops.mode", "safe", "--actor", "user:al"
    )
    assert code == 0 and out.startswith("pending: proposal")
    app = build_app(workspace, Path(config), client=redis_client)
    [proposal] = app.gateway.proposals.listed()
    done = BreakGlass(app.gateway).apply(proposal.id, actor("moderator:mo"), "db on fire", 0)
    assert isinstance(done, Committed), done
    code, out, _ = cli(capsys, workspace, config, "proposals", "--all")
    lines = out.splitlines()
    assert code == 0 and lines[0] == f"{proposal.id}  set ops.mode = safe  [applied, break-glass]"
    assert lines[-1].startswith("  applied by moderator:mo at ")
    assert lines[-1].endswith(
        f" (v1, mutation breakglass-{proposal.id}); broke the glass: db on fire"
    )
    code, out, _ = cli(capsys, workspace, config, "proposals", "--all", "--json")
    (row,) = map(json.loads, out.splitlines())
    assert row["status"] == "applied" and row["breakGlass"] == "db on fire"
