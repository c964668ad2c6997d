"""``deliberate state get|list --at TIME`` (the state as it was, from the checkpoint and the
log) and ``deliberate rules replay`` (what a rule book would have done over past mutations),
through the real CLI on real Redis."""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from bot.commands.args import when
from bot.redis.connection import connect
from core.metrics.tally import flush_all
from core.state.keys import WorkspaceKeys
from core.state.scripts import server_ms
from tests.bot.cli.process import run
from tests.bot.cli.test_compact_cli import handled
from tests.conftest import write_config
from tests.factories import mutation
from tests.rules.rig import config_text

NO_RULES = "  []\n"
NEW_RULE = """
  - id: db_moved
    when: {key: "test.db", op: set}
    if: {expr: 'state["test.db"] == "mysql"'}
    then:
      - mutate: {op: set, key: "test.moved", value: "{{ mutation.value }}"}
"""


@pytest.fixture
def config(tmp_path: Path) -> str:
    return str(write_config(tmp_path, config_text(NO_RULES)))


@pytest.fixture
def test_app(redis_client: Redis, workspace: str, config: str) -> App:
    return build_app(workspace, [Path(config)], client=redis_client)


def commit(app: App, op: str, key: str, value: object = None, **fields: object) -> str:
    outcome = app.gateway.propose(mutation(op, key, value, "user:ann", **fields))
    assert outcome.name == "committed", outcome
    return str(outcome.log_id)  # type: ignore[union-attr]


def cli(
    capsys: pytest.CaptureFixture[str], ws: str, config: str, *argv: str
) -> tuple[int, str, str]:
    return run(capsys, ws, "--config", config, *argv)


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")


def test_at_each_moment_equals_what_state_said_then(
    capsys: pytest.CaptureFixture[str], test_app: App, workspace: str, config: str
) -> None:
    said: list[tuple[str, int, str, str, str]] = []  # (log id, time, get, list, list text)
    steps = [
        ("set", "test.a", "one"),
        ("incr", "test.n", 5),
        ("set", "test.b", {"x": [1, 2]}),
        ("incr", "test.n", -2),
        ("delete", "test.a", None),
        ("set", "test.a", "again"),
    ]
    for op, key, value in steps:
        log_id = commit(test_app, op, key, value)
        now = server_ms(test_app.redis, test_app.store.keys.log)
        _, got, _ = cli(capsys, workspace, config, "state", "get", "test.a", "--json")
        _, listed, _ = cli(capsys, workspace, config, "state", "list", "test.", "--json")
        _, text, _ = cli(capsys, workspace, config, "state", "list")
        said.append((log_id, now, got, listed, text))
        time.sleep(0.005)  # the next commit lands in a later millisecond
    for log_id, now, got, listed, text in said:
        for at in (log_id, iso(now)):
            code, out, err = cli(
                capsys, workspace, config, "state", "get", "test.a", "--json", "--at", at
            )
            assert (code == 0) == ('"found":false' not in got)
            assert out == got and f"the log through {log_id}" in err
            code, out, err = cli(
                capsys, workspace, config, "state", "list", "test.", "--json", "--at", at
            )
            assert code == 0 and out == listed and err.startswith("as of ")
            code, out, _ = cli(capsys, workspace, config, "state", "list", "--at", at)
            head, *rest = out.splitlines()
            assert head.startswith("as of ") and head.endswith(f"the log through {log_id}")
            assert rest == text.splitlines()
    code, out, _ = cli(capsys, workspace, config, "state", "get", "test.a", "--at", said[4][0])
    assert code == 1 and out.splitlines()[1] == "test.a is not set (last version 2)"


def test_relative_times_and_log_ids(
    capsys: pytest.CaptureFixture[str], test_app: App, workspace: str, config: str
) -> None:
    first = commit(test_app, "set", "test.a", "first")
    commit(test_app, "set", "test.a", "second", ttl_sec=3600)
    code, out, _ = cli(capsys, workspace, config, "state", "get", "test.a", "--at", "0s")
    # (counted from the moment the command reads: a second may pass on a loaded machine)
    assert code == 0 and '"second"' in out and re.search(r"expires in 3(600|599)s", out)
    code, out, _ = cli(capsys, workspace, config, "state", "get", "test.a", "--at", "1d")
    assert code == 1 and "before any record" in out and "test.a is not set" in out
    code, out, _ = cli(capsys, workspace, config, "state", "list", "--at", "30m ago")
    assert code == 0 and out.splitlines()[1:] == ["no keys are set"]
    code, out, _ = cli(capsys, workspace, config, "state", "get", "test.a", "--at", first)
    assert code == 0 and out.startswith(f"as of log {first} (") and '"first"' in out
    assert '"second"' not in out


def test_the_time_forms() -> None:
    assert when("2026-11-25T10:00Z").ms == when("2026-11-25 10:00").ms == 1795600800000
    assert when("2026-11-25T11:00+01:00").ms == 1795600800000
    assert when("30m").ago_ms == when("30m ago").ago_ms == 1_800_000
    assert when("2h").ago_ms == 7_200_000 and when("1d").ago_ms == 86_400_000
    assert when("1795292750809-0").log_id == "1795292750809-0"
    for bad in ("yesterday", "12", "30x", "2026-13-01", ""):
        with pytest.raises(argparse.ArgumentTypeError, match="is not a time"):
            when(bad)


@pytest.mark.parametrize(
    "past",
    [
        "9" * 300 + "s",  # a float of inf: round() raised OverflowError
        "999999999w",
        "9999999999999999-0",
        "1-99999999999999999999",  # a sequence past a stream id's 64 bits
        "9999-12-31T23:59:59-01:00",
    ],
)
def test_a_time_past_any_log_is_a_usage_error_not_a_crash(past: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        when(past)


def test_a_bad_time_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], workspace: str, config: str
) -> None:
    for argv in (
        ("state", "get", "test.a", "--at", "last tuesday"),
        ("state", "list", "--at", "last tuesday"),
        ("rules", "replay", "--since", "last tuesday"),
    ):
        code, _, err = cli(capsys, workspace, config, *argv)
        assert code == 2 and "'last tuesday' is not a time" in err
        assert "ISO-8601" in err and "30m" in err and "log id" in err


def test_a_moment_compacted_away_is_refused(
    capsys: pytest.CaptureFixture[str],
    redis_client: Redis,
    test_app: App,
    workspace: str,
    config: str,
) -> None:
    ids = [commit(test_app, "incr", "test.n", 1) for _ in range(6)]
    handled(redis_client, test_app)
    code, out, _ = cli(capsys, workspace, config, "compact", "--keep-records", "2")
    assert code == 0 and f"through {ids[3]}" in out
    code, out, err = cli(capsys, workspace, config, "state", "get", "test.n", "--at", ids[1])
    assert code == 1 and out == ""
    assert "no longer on record" in err and "oldest moment available is" in err
    assert f"(log {ids[3]})" in err
    code, _, err = cli(capsys, workspace, config, "state", "list", "--at", "1d")
    assert code == 1 and f"(log {ids[3]})" in err
    code, _, err = cli(capsys, workspace, config, "rules", "replay", "--since", ids[0])
    assert code == 1 and f"(log {ids[3]})" in err
    for at, n in ((ids[3], 4), (ids[5], 6)):
        code, out, _ = cli(capsys, workspace, config, "state", "get", "test.n", "--at", at)
        assert code == 0 and f"test.n = {n}  (v{n}" in out


def every_key(workspace: str) -> dict[str, tuple[bytes | None, int]]:
    """Each key of the workspace: its contents (DUMP, never decoded) and its time to live
    (ms, -1: none), once the counts this process made (the commits') are flushed; on a
    single server or a cluster, as the tests run."""
    flush_all()
    client = connect(os.environ["REDIS_URL"])
    names = client.scan_iter(match=WorkspaceKeys(workspace).every_key, count=1000)
    return {name: (client.dump(name), client.pttl(name)) for name in names}


def unchanged(before: dict[str, tuple[bytes | None, int]], workspace: str) -> None:
    """No key written, added or removed: the same contents, and no expiry set or renewed."""
    after = every_key(workspace)
    assert after.keys() == before.keys()
    for name, (dump, ttl) in after.items():
        assert dump == before[name][0], name
        assert (ttl == -1) == (before[name][1] == -1) and ttl <= before[name][1], name


def test_rules_replay_shows_what_a_new_rule_would_have_done(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, test_app: App, workspace: str, config: str
) -> None:
    new = str(write_config(tmp_path, config_text(NEW_RULE), "new.yaml"))
    first = commit(test_app, "set", "test.db", "mysql")
    second = commit(test_app, "set", "test.db", "postgres")
    commit(test_app, "set", "test.other", "x")
    third = commit(test_app, "set", "test.db", "sqlite")
    before = every_key(workspace)
    assert len(before) > 3  # the log, the entries, the versions, the rules cursor

    code, out, _ = cli(capsys, workspace, config, "rules", "replay", "--since", first)
    assert code == 0 and out == f"4 records read ({first} to {third}); no rule would have run\n"

    argv = ("rules", "replay", "--since", first, "--config", new)
    code, out, _ = cli(capsys, workspace, config, *argv)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"{first}  ") and "set test.db" in lines[0]
    assert lines[1].startswith("  db_moved: no (")
    assert lines[2].startswith(f"{second}  ")
    assert lines[3].startswith("  db_moved: WOULD RUN")
    assert lines[4] == '    step 1: set test.moved "postgres"'
    assert lines[5].startswith(f"{third}  ") and lines[6].startswith("  db_moved: no (")
    assert lines[-1] == (
        f"4 records read ({first} to {third}); rules would have run 1 time(s): db_moved 1"
    )

    code, out, _ = cli(capsys, workspace, config, *argv, "--until", second, "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["record"]["logId"] for row in rows[:-1]] == [first, second]
    assert [r["held"] for row in rows[:-1] for r in row["rules"]] == [False, True]
    assert rows[1]["rules"][0]["steps"][0]["mutate"]["value"] == "postgres"
    assert rows[-1] == {
        "summary": {"records": 2, "first": first, "last": second, "fired": {"db_moved": 1}}
    }
    code, out, _ = cli(
        capsys, workspace, config, "rules", "replay", "--since", "0s", "--config", new
    )
    assert code == 0 and out == "no record in that window: nothing would have run\n"
    unchanged(before, workspace)  # nothing written, enqueued or sent


def test_a_replayed_book_that_forgets_a_keys_secrecy_still_prints_no_secret(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    """The running config keeps ``vault.*`` secret; a replayed book that writes the pattern
    afresh without it must not print a past secret value in the steps it plans."""
    secret_key = '    - pattern: "vault.*"\n      secret: true\n      type: string\n'
    config = str(write_config(tmp_path, config_text(NO_RULES, keys=secret_key)))
    app = build_app(workspace, [Path(config)], client=redis_client)
    leak_rule = """
  - id: leak
    when: {key: "vault.token", op: set}
    then:
      - mutate: {op: set, key: "test.copy", value: "copied {{ mutation.value }}"}
"""
    plain_key = '    - !replace {pattern: "vault.*", type: string}\n'
    new = str(write_config(tmp_path, config_text(leak_rule, keys=plain_key), "new.yaml"))
    first = commit(app, "set", "vault.token", "hunter2-tok3n")
    argv = ("rules", "replay", "--since", first, "--config", new)
    code, out, _ = cli(capsys, workspace, config, *argv)
    assert code == 0 and "leak: WOULD RUN" in out
    assert "hunter2-tok3n" not in out, out
