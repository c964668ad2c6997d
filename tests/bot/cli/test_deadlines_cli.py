"""A proposal's deadlines in ``deliberate proposals`` and ``deliberate trace``, through the real
CLI on a real Redis: until when it may be applied, when it escalates to its reviewers (or
did: when the sweep posted it), and how long a change for a while lasts once applied; each in
UTC and how far off by the Redis server's clock, a deadline past said as past ("3 min ago"),
never as a negative time. Times in the past are made by writing the proposal as it would be
had it been made earlier (no test waits for a clock)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from bot.proposals.escalation import Escalations
from core.gateway.outcome import Pending, Proposal
from core.state.scripts import server_ms
from tests.bot.cli.process import run
from tests.conftest import write_config
from tests.factories import actor, mutation
from tests.rules.rig import config_text

MOMENT = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"
HOUR_MS, MIN_MS = 3_600_000, 60_000
KEYS = """    - pattern: "banner.*"
      type: string
      revert_after_sec: 1800
      approval: {people: true, escalate: {after_sec: 3600}}
"""


@pytest.fixture
def config(tmp_path: Path) -> str:
    return str(write_config(tmp_path, config_text("  []\n", keys=KEYS)))


@pytest.fixture
def team(config: str, redis_client: Redis, workspace: str) -> App:
    return build_app(workspace, Path(config), client=redis_client)


def cli(capsys: pytest.CaptureFixture[str], workspace: str, config: str, *argv: str) -> str:
    code, out, _ = run(capsys, workspace, "--config", config, *argv)
    assert code == 0, out
    return out


def asked(app: App, key: str = "banner.top") -> Proposal:
    pending = app.gateway.propose(mutation("set", key, "live", "user:al"))
    assert isinstance(pending, Pending), pending
    return pending.proposal


def made_earlier(app: App, proposal: Proposal, ago_ms: int, expires_in_ms: int) -> None:
    """The proposal as if made ``ago_ms`` ago, due ``expires_in_ms`` from now (negative:
    past), in its key (whose expiry is kept) and in the index the sweep reads."""
    now = server_ms(app.redis, app.store.keys.versions)
    moved = proposal.model_copy(
        update={"created_at": now - ago_ms, "expires_at": now + expires_in_ms}
    )
    key = app.store.keys.proposal(proposal.id)
    app.redis.set(key, moved.model_dump_json(by_alias=True), keepttl=True)
    app.redis.zadd(app.store.keys.proposals, {proposal.id: now + expires_in_ms}, xx=True)


def second_line(out: str, proposal_id: str) -> str:
    lines = out.splitlines()
    return lines[lines.index(next(x for x in lines if x.startswith(proposal_id))) + 1]


def test_a_pending_proposal_shows_when_it_expires_escalates_and_how_long_it_lasts(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    p = asked(team)
    line = second_line(cli(capsys, workspace, config, "proposals"), p.id)
    assert re.fullmatch(
        rf"  proposed and requested by user:al, \d+s ago; expires at {MOMENT} \(in 24 h\); "
        rf"escalates at {MOMENT} \(in 1 h\); reverts by itself 30m after it is applied",
        line,
    ), line
    [shown] = [json.loads(x) for x in cli(capsys, workspace, config, "proposals", "--json").split()]
    assert shown["deadline"] == p.expires_at
    assert shown["escalatesAt"] == p.created_at + HOUR_MS and "escalatedAt" not in shown


def test_past_deadlines_show_as_past_never_negative(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    late, unposted = asked(team), asked(team, "banner.side")
    made_earlier(team, late, 2 * HOUR_MS, -3 * MIN_MS)  # not swept yet: still pending
    made_earlier(team, unposted, 2 * HOUR_MS, 20 * HOUR_MS)  # no sweep has posted it yet
    out = cli(capsys, workspace, config, "proposals")
    line = second_line(out, late.id)
    assert re.search(rf"; expired at {MOMENT} \(3 min ago\); ", line), line
    assert "escalat" not in line  # past its deadline unposted: it never will be
    assert "-" not in line.split("ago")[0].split("UTC")[-1]
    line = second_line(out, unposted.id)
    assert re.search(rf"; escalation due since {MOMENT} \(1 h ago\); ", line), line
    assert team.gateway.expire_due() == 1  # the sweep finds it past: said the same way
    out = cli(capsys, workspace, config, "proposals", "--all")
    assert re.search(rf"  expired at {MOMENT} \(3 min ago\): nobody applied it in time", out)


def test_an_escalated_proposal_shows_when_it_was_escalated_in_the_list_and_the_trace(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    p = asked(team)
    made_earlier(team, p, HOUR_MS + 5 * MIN_MS, 20 * HOUR_MS)
    now = server_ms(team.redis, team.store.keys.versions)
    assert Escalations(team, {}).run(now_ms=now - 2 * MIN_MS) == 0  # nobody to post to
    line = second_line(cli(capsys, workspace, config, "proposals"), p.id)
    assert re.search(rf"; escalated at {MOMENT} \(2 min ago\); ", line), line
    [shown] = [json.loads(x) for x in cli(capsys, workspace, config, "proposals", "--json").split()]
    assert shown["escalatedAt"] == now - 2 * MIN_MS
    trace = cli(capsys, workspace, config, "trace", p.id)
    assert trace.startswith(f"proposal {p.id}  set banner.top = live\n")
    assert re.search(rf"; escalated at {MOMENT} \(2 min ago\); ", trace.splitlines()[1])
    header = json.loads(cli(capsys, workspace, config, "trace", p.id, "--json").splitlines()[0])
    assert header["data"]["escalatedAt"] == now - 2 * MIN_MS


def test_once_applied_a_timed_proposal_shows_when_its_change_reverts(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str, team: App
) -> None:
    p = asked(team)
    team.gateway.apply_proposal(p.id, actor("user:bo"), revision=0)
    out = cli(capsys, workspace, config, "proposals", "--all")
    line = second_line(out, p.id)
    assert re.search(rf"; reverts at {MOMENT} \(in 30 min\) by revert-", line), line
    assert "escalat" not in line  # decided before it was due: nothing to say of it
    trace = cli(capsys, workspace, config, "trace", p.id)
    assert re.search(rf"for a while: reverts at {MOMENT} by revert-", trace)
