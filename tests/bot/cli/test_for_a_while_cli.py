"""``deliberate state set KEY VALUE --for 30m``: a change for a while, through the real CLI
on a real Redis. Its deadline (in UTC, how far off, and the mutation that reverts it) shows
in ``state get``/``list``, the write's answer, ``log``, ``trace`` and ``proposals``; the
worker's sweep reverts it then (the sweep is told a moment past the deadline instead of
waiting for it), after which the key shows as reverted, by that mutation, not as timed; a
bad duration is a usage error."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from redis import Redis

from bot.app import build_app
from bot.cli.worker import schedule
from core.gateway.outcome import Pending
from core.gateway.timed import revert_due
from core.state.scripts import server_ms
from tests.bot.cli.process import run
from tests.conftest import write_config
from tests.factories import actor, mutation
from tests.rules.rig import config_text, make_rig

WHEN = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"


def test_set_for_a_while_shows_its_deadline_then_reverts(
    capsys: pytest.CaptureFixture[str], workspace: str, redis_client: Redis
) -> None:
    assert run(capsys, workspace, "state", "set", "decision.db", "pg", "--actor", "user:al")[0] == 0
    code, out, _ = run(
        capsys, workspace, "state", "set", "decision.db", "mysql", "--actor", "user:al",
        "--for", "30m",
    )  # fmt: skip
    by = r"by revert-[0-9a-f]+"
    assert code == 0 and re.search(
        rf'decision.db = "mysql" .*\); reverts at {WHEN} \(in 30 min\) {by}$', out.strip()
    )
    code, out, _ = run(capsys, workspace, "state", "get", "decision.db", "--json")
    entry = json.loads(out)
    made = entry["meta"]["mutationId"]
    assert entry["revertsAt"] == entry["updatedAt"] + 1_800_000
    assert entry["revertedBy"] == f"revert-{made}"
    code, out, _ = run(capsys, workspace, "state", "get", "decision.db")
    assert code == 0 and re.search(
        rf"\(v2, user:al, .*\); reverts at {WHEN} \(in 30 min\) by revert-{made}$", out.strip()
    )
    code, out, _ = run(capsys, workspace, "state", "list", "decision.")
    assert "; reverts at " in out and f"by revert-{made}" in out
    code, out, _ = run(capsys, workspace, "log")
    assert re.search(rf"for 1800s, reverts at {WHEN} by revert-{made}", out)

    app = build_app(workspace, client=redis_client)
    assert revert_due(app.gateway, now_ms=entry["revertsAt"]) == 1
    code, out, _ = run(capsys, workspace, "state", "get", "decision.db")
    assert code == 0 and '"pg"' in out and "reverts at" not in out
    assert re.search(rf"; reverted at {WHEN} \((?:\d+ s ago|now)\) by revert-{made}$", out.strip())
    code, out, _ = run(capsys, workspace, "state", "get", "decision.db", "--json")
    assert json.loads(out)["revertOf"] == made and "revertsAt" not in json.loads(out)
    code, out, _ = run(capsys, workspace, "log")
    # both mutations are on the log: the change for a while, then its timed revert
    lines = [line for line in out.splitlines() if "decision.db" in line]
    assert len(lines) == 3 and "timed revert of" in lines[-1]
    code, out, _ = run(capsys, workspace, "trace", entry["meta"]["correlationId"])
    assert code == 0 and re.search(rf"for a while: reverts at {WHEN} by revert-{made}", out)
    assert "timed revert of " + entry["meta"]["mutationId"] in out  # the same story
    # and where it stands now: reverted, when, by which mutation
    assert re.search(
        rf"^now: decision.db \(mutation {made}\): reverted at {WHEN} \(.+\) "
        rf"by revert-{made}$",
        out,
        re.M,
    )


def test_delete_for_a_while_comes_back(
    capsys: pytest.CaptureFixture[str], workspace: str, redis_client: Redis
) -> None:
    run(capsys, workspace, "state", "set", "decision.x", "kept", "--actor", "user:al")
    code, out, _ = run(
        capsys, workspace, "state", "delete", "decision.x", "--actor", "user:al", "--for", "90s",
        "--json",
    )  # fmt: skip
    done = json.loads(out)
    assert code == 0 and done["revertsAt"] > 0
    assert revert_due(build_app(workspace, client=redis_client).gateway, done["revertsAt"]) == 1
    code, out, _ = run(capsys, workspace, "state", "get", "decision.x")
    assert code == 0 and '"kept"' in out


@pytest.mark.parametrize("bad", ["30x", "soon", "0m", "1.5h", "30"])
def test_a_bad_duration_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], workspace: str, redis_client: Redis, bad: str
) -> None:
    code, out, err = run(
        capsys, workspace, "state", "set", "decision.y", "v", "--actor", "user:al", "--for", bad
    )
    assert code == 2 and out == ""
    assert "--for" in err and ("duration" in err or "no time at all" in err)
    assert redis_client.hget(f"{{ws:{workspace}}}:versions", "decision.y") is None


def test_proposals_show_how_long_a_change_lasts(
    capsys: pytest.CaptureFixture[str], workspace: str, redis_client: Redis, tmp_path: Path
) -> None:
    keys = (
        '    - pattern: "banner.*"\n      revert_after_sec: 1800\n      approval: {people: true}\n'
    )
    config = str(write_config(tmp_path, config_text("  []\n", keys=keys)))
    team = build_app(workspace, Path(config), client=redis_client)
    asked = team.gateway.propose(mutation("set", "banner.top", "live", "user:al"))
    assert isinstance(asked, Pending)
    code, out, _ = run(capsys, workspace, "--config", config, "proposals")
    assert code == 0 and "; reverts by itself 30m after it is applied" in out
    team.gateway.apply_proposal(asked.proposal.id, actor("user:bo"), revision=0)  # as a click does
    code, out, _ = run(capsys, workspace, "--config", config, "proposals", "--all")
    applied = team.gateway.proposals.get(asked.proposal.id)
    assert applied is not None and applied.committed is not None
    made = applied.committed.mutation.id
    assert code == 0 and re.search(rf"; reverts at {WHEN} \(in 30 min\) by revert-{made}\n", out)
    assert "applied by user:bo" in out
    # the sweep reverts it: said as done, when, by which mutation
    assert (
        revert_due(
            team.gateway, now_ms=server_ms(redis_client, team.store.keys.versions) + 1_800_000
        )
        == 1
    )
    code, out, _ = run(capsys, workspace, "--config", config, "proposals", "--all")
    assert code == 0 and re.search(rf"; reverted at {WHEN} \(.+\) by revert-{made}\n", out)


def test_the_worker_reverts_a_due_change_at_its_next_pass(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, "  []\n")
    schedule(rig.service, rig.app)
    assert "revert changes made for a while at their deadline" in [
        c.name for c in rig.service.chores
    ]
    rig.app.gateway.propose(mutation("set", "decision.w", "a", "user:al"))
    done = rig.app.gateway.propose(mutation("set", "decision.w", "b", "user:al", for_sec=60))
    # its deadline set in the past: the chore's clock (the Redis server's) finds it due
    rig.app.redis.zadd(rig.app.store.keys.timed, {done.mutation.id: 1})
    rig.service.step()
    assert rig.app.store.get("decision.w").value == "a"  # type: ignore[union-attr]
