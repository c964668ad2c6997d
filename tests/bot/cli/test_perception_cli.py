"""``deliberate perception status|reset``: what the team's clicks taught this workspace, and
forgetting it, on the suite's Redis; another workspace's table is never shown or cleared."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app import build_app
from bot.reports.trace import collect
from core.deliberation.interpretation import ActType
from core.perception.team import BOUND, Lesson, TeamWeights, marks
from core.redis.client import RedisClient
from core.runtime.team_weights import TeamStore
from tests.bot.cli.process import run
from tests.conftest import delete_workspace, write_config


@pytest.fixture
def elsewhere(redis_client: RedisClient) -> Iterator[str]:
    name = f"test-{uuid.uuid4().hex[:12]}"
    yield name
    delete_workspace(redis_client, name)


def taught(client: RedisClient, workspace: str, lessons: int) -> None:
    store = TeamStore(client, workspace)
    for n in range(lessons):
        store.learn(Lesson(marks("roger that"), ActType.COMMIT, ActType.TANGENT, f"click-{n}"))


def test_status_of_a_workspace_no_click_taught(
    capsys: pytest.CaptureFixture[str], workspace: str
) -> None:
    code, out, err = run(capsys, workspace, "perception", "status")
    assert (code, err) == (0, "")
    assert out == (
        f"workspace {workspace}: team weights on\n"
        "no click has taught them yet: the shipped model reads alone\n"
    )


def test_status_says_what_the_clicks_taught_and_reset_forgets_it(
    capsys: pytest.CaptureFixture[str],
    redis_client: RedisClient,
    workspace: str,
    elsewhere: str,
) -> None:
    taught(redis_client, workspace, 3)
    taught(redis_client, elsewhere, 1)
    code, out, _ = run(capsys, workspace, "perception", "status")
    lines = out.splitlines()
    assert code == 0 and lines[0] == f"workspace {workspace}: team weights on"
    assert lines[1].startswith("3 lessons from clicks, the last 20")
    assert "seconds ago" in lines[1] and f"of ±{BOUND}" in lines[1]
    code, out, _ = run(capsys, workspace, "perception", "status", "--json")
    record = json.loads(out)
    assert record["lessons"] == 3 and record["readable"] and record["adapt"]
    assert 0 < record["largest_weight"] <= BOUND and record["marks_weighted"] > 0
    code, out, _ = run(capsys, workspace, "perception", "reset", "--as", "admin:lena")
    assert code == 0
    assert out == (
        f"workspace {workspace}: forgot 3 lessons from clicks; the shipped model reads alone "
        "until a click teaches it again\n"
    )
    assert TeamStore(redis_client, workspace).load() == TeamWeights()
    # the other workspace keeps its own
    other = TeamStore(redis_client, elsewhere).load()
    assert other is not None and other.lessons == 1
    # the trace keeps who forgot what
    app = build_app(workspace, client=redis_client)
    [(_, fields)] = app.redis.xrange(app.trace.keys.trace)
    reset = collect(app, fields["corr"])
    assert [r["event"] for r in reset] == ["perception.reset"]
    assert reset[0]["data"] == {"lessons": 3, "by": "admin:lena", "unreadable": False}
    # nothing left: said so, and no line on the trace
    code, out, _ = run(capsys, workspace, "perception", "reset")
    assert (code, out) == (0, f"workspace {workspace}: no team weights to forget\n")
    assert len(app.redis.xrange(app.trace.keys.trace)) == 1


def test_a_damaged_table_is_said_and_reset_clears_it(
    capsys: pytest.CaptureFixture[str], redis_client: RedisClient, workspace: str
) -> None:
    redis_client.set(TeamStore(redis_client, workspace).key, b"\xff\xfe{not json")
    code, out, _ = run(capsys, workspace, "perception", "status")
    assert code == 0 and "is no table of weights" in out
    assert json.loads(run(capsys, workspace, "perception", "status", "--json")[1]) == {
        "workspace": workspace,
        "adapt": True,
        "readable": False,
    }
    code, out, _ = run(capsys, workspace, "perception", "reset")
    assert (code, out) == (0, f"workspace {workspace}: cleared what was no table of weights\n")
    assert TeamStore(redis_client, workspace).load() == TeamWeights()


def test_status_says_when_the_config_turns_them_off(
    capsys: pytest.CaptureFixture[str], workspace: str, tmp_path: Path
) -> None:
    config = write_config(tmp_path, "perception:\n  adapt: false\n")
    code, out, _ = run(capsys, workspace, "--config", str(config), "perception", "status")
    assert code == 0
    assert (
        out.splitlines()[0] == f"workspace {workspace}: team weights off (perception.adapt: false)"
    )


def test_help_and_a_missing_word(capsys: pytest.CaptureFixture[str], workspace: str) -> None:
    code, out, _ = run(capsys, workspace, "perception", "--help")
    said = " ".join(out.split())  # (as wrapped to the terminal)
    assert code == 0 and "status" in said and "reset" in said and "halve every 14 days" in said
    code, _, err = run(capsys, workspace, "perception")
    assert code == 2 and "perception" in err
