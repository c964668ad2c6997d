"""Rule bookkeeping does not grow without bound: after runs complete, every rules key of the
workspace either lapses (a TTL) or holds only what is still pending; old runs are trimmed;
the consumer group loses its dead consumers and keeps any with pending records."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from rules.keys import CONSUMER_GROUP, KEEP_SEC, RuleKeys
from tests.polling import wait_for
from tests.rules.rig import Rig, make_rig
from tests.servers.webhook import WebhookServer


@pytest.fixture
def hook() -> Iterator[WebhookServer]:
    with WebhookServer() as server:
        yield server


def every_kind(hook: WebhookServer) -> str:
    """Rules that leave each kind of bookkeeping behind: runs, steps, cooldowns, stop
    markers (mode restart), signal observations and a pending ``for`` timer."""
    return f"""
  - id: notify
    when: {{key: "test.n.*", op: set}}
    mode: restart
    cooldown: 1h
    then:
      - action: http.post
        args: {{url: "{hook.hook_url}", json: "{{{{ mutation.key }}}}"}}
      - mutate: {{op: set, key: test.noticed, value: "{{{{ mutation.key }}}}"}}
  - id: promoted
    when: {{key: test.seen, op: set}}
    signal: {{at_least: 3, confidence: 0.5, within: 1h}}
    then:
      - mutate: {{op: set, key: test.promoted, value: true}}
  - id: settled
    when: {{key: test.state, to: "off"}}
    for: 1h
    then:
      - mutate: {{op: set, key: test.noticed, value: settled}}
"""


def rule_keys(client: Redis, workspace: str) -> dict[str, tuple[str, int]]:
    """Every rules key of the workspace: its type and its TTL."""
    found: dict[str, tuple[str, int]] = {}
    for key in client.scan_iter(match=RuleKeys(workspace).every_key, count=1000):
        found[str(key)] = (str(client.type(key)), int(client.ttl(key)))
    return found


def unbounded(rig: Rig, client: Redis) -> dict[str, tuple[str, int]]:
    """The keys that neither lapse nor hold only what is pending."""
    keys = RuleKeys(rig.app.store.workspace)
    bounded = {keys.evaluations, keys.timers, keys.timer_causes}
    left = {k: v for k, v in rule_keys(client, rig.app.store.workspace).items() if v[1] < 0}
    assert client.xlen(keys.evaluations) <= rig.app.rules.automation.evaluations_kept + 100
    timers, causes = client.zrange(keys.timers, 0, -1), client.hkeys(keys.timer_causes)
    assert sorted(timers) == sorted(causes)  # one cause per pending timer, no other
    return {k: v for k, v in left.items() if k not in bounded}


def test_after_runs_complete_every_rules_key_lapses_or_holds_only_what_is_pending(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, every_kind(hook))
    keys = RuleKeys(workspace)
    rig.commit("set", "test.n.a", 1)
    rig.commit("set", "test.n.b", 1)
    rig.service.drain()
    jobs = {r["key"]: r["data"]["job"] for r in rig.evaluations("evaluated")}
    rig.engine.runs.request_stop(jobs["test.n.a"])  # as a newer firing would: a stop marker
    rig.work()
    for _ in range(2):
        rig.commit("set", "test.seen", 0.9)
    rig.commit("set", "test.state", "off")
    rig.work()
    kinds = {k.split(":rules:")[1].split(":")[0] for k in rule_keys(redis_client, workspace)}
    assert {"runs", "steps", "cooldown", "stop", "signal", "timers", "timer-causes"} <= kinds
    assert unbounded(rig, redis_client) == {}
    runs = keys.runs("notify", "test.n.a")
    assert 0 < redis_client.ttl(runs) <= KEEP_SEC
    assert 0 < redis_client.ttl(keys.steps(jobs["test.n.b"])) <= KEEP_SEC


def test_runs_older_than_the_keeping_time_are_trimmed_and_old_sets_given_a_ttl(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, every_kind(hook))
    keys = RuleKeys(workspace)
    long_ago = (time.time() - KEEP_SEC - 60) * 1000
    runs = keys.runs("notify", "test.n.a")
    redis_client.zadd(runs, {"rule-from-long-ago": long_ago})  # as written before TTLs
    legacy = keys.runs("notify", "test.n.quiet")
    redis_client.zadd(legacy, {"rule-old": long_ago, "rule-recent": time.time() * 1000})
    rig.commit("set", "test.n.a", 1)
    rig.work()
    assert "rule-from-long-ago" not in redis_client.zrange(runs, 0, -1)
    assert redis_client.zcard(runs) == 1 and redis_client.ttl(runs) > 0
    # no run for that key since: the service's sweep, at its first pass, reached it
    assert redis_client.zrange(legacy, 0, -1) == ["rule-recent"]
    assert 0 < redis_client.ttl(legacy) <= KEEP_SEC
    assert rig.engine.runs.sweep() == 0
    redis_client.persist(legacy)
    assert rig.engine.runs.sweep() == 1 and redis_client.ttl(legacy) > 0


def test_a_timer_cause_without_its_timer_is_swept(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, every_kind(hook))
    keys = RuleKeys(workspace)
    rig.commit("set", "test.state", "off")
    rig.service.drain()
    redis_client.hset(keys.timer_causes, "gone|test.other", "1-0")  # a timer long gone
    assert rig.engine.timers.sweep() == 1
    assert redis_client.hkeys(keys.timer_causes) == ["settled|test.state"]
    assert rig.engine.timers.pending("settled", "test.state") is not None


def consumers(client: Redis, workspace: str) -> dict[str, int]:
    rows = client.xinfo_consumers(RuleKeys(workspace).log, CONSUMER_GROUP)
    return {row["name"]: row["pending"] for row in rows}


def test_dead_consumers_are_deleted_and_those_with_pending_records_kept(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, every_kind(hook))
    log, service = RuleKeys(workspace).log, rig.service
    rig.commit("set", "test.other", 1)
    service.drain()  # this worker's own consumer, with nothing pending
    for name in ("gone-1:1", "gone-2:2"):
        redis_client.xgroup_createconsumer(log, CONSUMER_GROUP, name)
    rig.commit("set", "test.other", 2)
    redis_client.xreadgroup(CONSUMER_GROUP, "died-mid-record:3", {log: ">"}, count=1)
    assert consumers(redis_client, workspace) == {
        service.consumer.name: 0,
        "gone-1:1": 0,
        "gone-2:2": 0,
        "died-mid-record:3": 1,
    }
    assert service.consumer.prune() == []  # none has been idle a day

    def pruned(idle_ms: int, left: int) -> bool:
        service.consumer.prune(idle_ms=idle_ms)
        return len(consumers(redis_client, workspace)) == left

    wait_for(lambda: pruned(50, left=2))
    assert consumers(redis_client, workspace) == {
        service.consumer.name: 0,
        "died-mid-record:3": 1,  # XAUTOCLAIM takes its record first; then it goes too
    }
    service.consumer.claim_idle_ms = 0
    service.drain()
    assert consumers(redis_client, workspace)["died-mid-record:3"] == 0
    wait_for(lambda: pruned(50, left=1))
    assert consumers(redis_client, workspace) == {service.consumer.name: 0}
