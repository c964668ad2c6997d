"""Three workspaces on three different shards of a real three-primary Redis Cluster, each
driven through the real ``deliberate`` command: a set (whose keys sit on the primary the
workspace's hash slot names), a CAS conflict refused, the log, ``replay --verify``, a console
click and a ``worker --burst`` whose rule calls a local webhook, the RQ queue on a single
Redis server (``DELIBERATE_QUEUE_URL``); and a worker on a cluster without one is refused in
one line.

The commands run in this process (``tests.bot.cli.process``): these tests are about the
cluster, and a process of its own added nothing to them but some 0.4 s of CPU each (28 of
them); starting, stopping and two processes at once are tested against the embedded and the
session's server (``tests/faults``, ``tests/bot/cli``)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.redis.connection import connect
from core.state.keys import WorkspaceKeys
from tests.bot.cli.process import Ran, command
from tests.conftest import delete_workspace, write_config
from tests.rules.rig import config_text
from tests.servers.redis_cluster import LocalCluster
from tests.servers.webhook import WebhookServer

SHARDS = 3  # the primaries of the conftest's cluster
IDEA = "what if we held a raffle for subs"


@pytest.fixture(scope="module")
def workspaces(cluster: LocalCluster, single_redis_url: str) -> Iterator[list[str]]:
    """One workspace per primary; their keys (and their queues' keys) deleted afterwards."""
    by_port: dict[int, str] = {}
    prefix = uuid.uuid4().hex[:8]
    for n in range(1000):
        name = f"shard-{prefix}-{n}"
        by_port.setdefault(cluster.primary_of(WorkspaceKeys(name).versions).port, name)
        if len(by_port) == SHARDS:
            break
    names = list(by_port.values())
    yield names
    client = connect(cluster.url)
    queues = Redis.from_url(single_redis_url, decode_responses=True)
    for name in names:
        delete_workspace(client, name)
        delete_queue(queues, name)
    client.close()
    queues.close()


def delete_queue(queues: Redis, workspace: str) -> None:
    """The RQ keys of the workspace's queue: the queue, its registries and their jobs."""
    named = list(queues.scan_iter(match=f"rq:*:*.{workspace}", count=1000))
    registries = [key for key in named if queues.type(key) == "zset"]
    jobs = [str(job) for key in registries for job in queues.zrange(key, 0, -1)]
    doomed = named + [f"rq:{kind}:{job}" for job in jobs for kind in ("job", "results")]
    if doomed:
        queues.delete(*doomed)
    for queue in {key.split(":")[-1] for key in named}:
        queues.srem("rq:queues", f"rq:queue:{queue}")


def test_the_three_workspaces_are_on_three_different_primaries(
    cluster: LocalCluster, workspaces: list[str]
) -> None:
    ports = {cluster.primary_of(WorkspaceKeys(name).versions).port for name in workspaces}
    assert len(workspaces) == SHARDS and len(ports) == SHARDS, ports


@pytest.fixture
def hook() -> Iterator[WebhookServer]:
    with WebhookServer() as server:
        yield server


def rules_config(tmp_path: Path, hook: WebhookServer, workspace: str) -> str:
    """A rule posting each ``decision.*`` set to the webhook, then writing ``test.last``."""
    rules = f"""
  - id: notify
    when: {{key: "decision.*", op: set}}
    then:
      - action: http.post
        args:
          url: "{hook.hook_url}"
          json: {{workspace: "{workspace}", decided: "{{{{ mutation.value }}}}"}}
      - mutate: {{op: set, key: "test.last", value: "{{{{ mutation.key }}}}"}}
"""
    return str(write_config(tmp_path, config_text(rules)))


def ok(done: Ran) -> str:
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    return done.stdout


def lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def cluster_env(cluster: LocalCluster, **extra: str) -> dict[str, str | None]:
    """The command's environment on top of this process's: the cluster, and no queue server,
    workspace or model key of the session's (None: unset)."""
    drop = ("DELIBERATE_QUEUE_URL", "DELIBERATE_WORKSPACE", "OPENAI_API_KEY")
    return {**dict.fromkeys(drop), "REDIS_URL": cluster.url, **extra}


@pytest.mark.parametrize("shard", range(SHARDS))
def test_set_conflict_console_worker_log_and_replay_on_each_shard(
    shard: int,
    cluster: LocalCluster,
    workspaces: list[str],
    single_redis_url: str,
    hook: WebhookServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = workspaces[shard]
    env = cluster_env(cluster, DELIBERATE_QUEUE_URL=single_redis_url)
    common = ("--workspace", name, "--config", rules_config(tmp_path, hook, name))

    def run(*argv: str, stdin: str | None = None) -> Ran:
        return command(capsys, *common, *argv, env=env, stdin=stdin)

    ok(run("worker", "--burst"))  # the rule consumer's group, at the log's end

    # a set, on the primary that serves the workspace's slot
    set_ = ("state", "set", "decision.db")
    [committed] = lines(ok(run(*set_, "postgres", "--actor", "user:alice", "--json")))
    assert committed["outcome"] == "committed" and committed["version"] == 1, committed
    node = cluster.primary_of(WorkspaceKeys(name).versions)
    assert node.client.exists(WorkspaceKeys(name).entry("decision.db")) == 1

    # a CAS conflict: a stale expected version is refused, the value unchanged
    stale = run(*set_, "mysql", "--actor", "user:bob", "--expected-version", "0", "--json")
    assert stale.returncode == 1, (stale.stdout, stale.stderr)
    [refused] = lines(stale.stdout)
    assert (refused["outcome"], refused["reason"]) == ("rejected", "conflict"), refused
    entry = json.loads(ok(run("state", "get", "decision.db", "--json")))
    assert (entry["value"], entry["version"]) == ("postgres", 1), entry

    # a console click commits the candidate
    console = lines(ok(run("console", "--json", stdin=f"{IDEA}\n/click 1\n")))
    assert [e["event"] for e in console] == ["reply", "committed", "outcome"], console
    clicked = console[1]
    entry = json.loads(ok(run("state", "get", clicked["key"], "--json")))
    assert (entry["value"], entry["version"]) == (IDEA, clicked["version"]), entry

    # the worker runs the rule for both commits: two webhook calls, two derived sets
    burst = run("worker", "--burst")
    ok(burst)
    assert "2 runs started in 1 workspace(s)" in burst.stderr, burst.stderr
    assert sorted((r.json["workspace"], r.json["decided"]) for r in hook.requests) == sorted(
        [(name, "postgres"), (name, IDEA)]
    )

    # the log has every commit and not the refused one; the replay agrees with the state
    records = lines(ok(run("log", "--json")))
    log = [(r["key"], r["actor"]["kind"], r["actor"]["id"]) for r in records]
    assert log[:2] == [("decision.db", "user", "alice"), (clicked["key"], "user", "console")]
    assert sorted(log[2:]) == [("test.last", "automation", "notify")] * 2, log
    assert "OK: the replayed snapshot equals the live one" in ok(run("replay", "--verify"))

    # all that wrote to that one primary: the other two hold none of the workspace's keys
    assert node.client.keys(f"*{name}*") and node is cluster.primary_of(WorkspaceKeys(name).log)
    assert not [k for n in cluster.nodes if n is not node for k in n.client.keys(f"*{name}*")]


def test_a_worker_on_a_cluster_without_a_queue_server_says_so_in_one_line(
    cluster: LocalCluster, workspaces: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    env = cluster_env(cluster)
    done = command(capsys, "--workspace", workspaces[0], "worker", "--burst", env=env)
    assert done.returncode != 0, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("deliberate: ") and "DELIBERATE_QUEUE_URL" in line, line
