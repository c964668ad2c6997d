"""The engine on real Redis and a real RQ queue: rules fire on committed mutations, runs do
their steps once, loops are cut, for-timers survive restarts, signals fire at threshold."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis
from rq.job import Job

from rules.engine.engine import Engine
from rules.service import RuleService
from tests.rules.rig import Rig, make_rig
from tests.servers.webhook import WebhookServer


@pytest.fixture
def hook() -> Iterator[WebhookServer]:
    with WebhookServer() as server:
        yield server


def post_rule(hook: WebhookServer, extra: str = "", key: str = "test.*") -> str:
    return f"""
  - id: notify
    when: {{key: "{key}", op: set}}
{extra}    then:
      - action: http.post
        args:
          url: "{hook.hook_url}"
          json: {{key: "{{{{ mutation.key }}}}", value: "{{{{ mutation.value }}}}"}}
"""


def enqueued(rig: Rig) -> str:
    """Commit to test.a and let the engine enqueue the run (not run it): its job id."""
    rig.commit("set", "test.a", 1)
    rig.service.drain()
    return str(rig.evaluations("evaluated")[0]["data"]["job"])


def server_ms(client: Redis) -> int:
    seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def test_a_commit_fires_the_rule_and_the_action_reaches_the_server(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, post_rule(hook))
    committed = rig.commit("set", "test.a", 41)
    rig.work()
    (request,) = hook.requests
    assert request.json == {"key": "test.a", "value": 41}
    corr = committed.request.correlation_id
    events = [(r["event"], r["corr"]) for r in rig.evaluations()]
    assert events == [("evaluated", corr), ("action.done", corr)]
    done = rig.evaluations("action.done")[0]["data"]
    assert done["result"] == {"status": 200} and done["rule"] == "notify"
    assert request.header("Idempotency-Key") == f"{done['job']}.0"


def test_unrelated_keys_fire_nothing_and_leave_no_trace(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, post_rule(hook))
    rig.commit("set", "decision.other", "x", who="user:alice")
    rig.work()
    assert hook.requests == [] and rig.evaluations() == []


def test_a_job_run_twice_posts_once(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, post_rule(hook))
    rig.commit("set", "test.a", 1)
    rig.work()
    job_id = rig.evaluations("evaluated")[0]["data"]["job"]
    job = Job.fetch(job_id, connection=rig.queue.connection)
    rig.queue.enqueue_job(job)  # a duplicate delivery of the very same job
    rig.work()
    assert len(hook.requests) == 1
    # and the engine seeing the same record again enqueues nothing new
    record = rig.last_record("test.a")
    assert rig.engine.handle(record) == 1  # admitted as the job it already is
    assert "already enqueued" in rig.evaluations("evaluated")[-1]["data"]["why"]
    rig.work()
    assert len(hook.requests) == 1


def test_a_rule_loop_is_cut_at_the_chain_depth(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    rules = """
  - id: ping
    when: {key: test.ping}
    then:
      - mutate: {op: incr, key: test.pong}
  - id: pong
    when: {key: test.pong}
    then:
      - mutate: {op: incr, key: test.ping}
"""
    rig = make_rig(tmp_path, redis_client, workspace, rules, automation="  max_chain_depth: 4\n")
    first = rig.commit("incr", "test.ping", 1)
    rig.work()
    records = list(rig.app.log.records())
    assert len(records) == 5  # the person's commit and four derived ones
    derived = records[1:]
    assert [r.mutation.meta["depth"] for r in derived] == [1, 2, 3, 4]
    assert all(r.mutation.correlation_id == first.request.correlation_id for r in derived)
    assert [r.mutation.causation_id for r in derived] == [r.mutation.id for r in records[:-1]]
    assert derived[0].mutation.actor.kind.value == "automation"
    (cut,) = rig.evaluations("cut")
    assert "limit is 4" in cut["data"]["why"] and cut["data"]["rule"] == "ping"


def test_a_for_timer_survives_a_restart_and_fires_only_if_it_still_holds(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    rules = """
  - id: off_for_a_while
    when: {key: test.state, to: "off"}
    for: 1s
    then:
      - mutate: {op: set, key: test.noticed, value: "{{ mutation.value }}"}
"""
    rig = make_rig(tmp_path, redis_client, workspace, rules)
    rig.commit("set", "test.state", "off")
    rig.service.drain()
    assert "fires in 1s" in rig.evaluations("evaluated")[0]["data"]["why"]
    # the process that started the timer is gone; a new engine and consumer pick it up
    engine = Engine(rig.app.store, rig.app.rules, rig.queue)
    restarted = RuleService(engine, rig.queue, clock=rig.clock)
    rig.service = restarted
    rig.engine = restarted.engine
    started = rig.last_record("test.state").ts
    rig.clock.at_ms = started + 999
    rig.work()
    assert rig.app.store.get("test.noticed") is None  # not a moment before its second
    rig.clock.at_ms = started + 1000
    rig.work()
    assert rig.app.store.get("test.noticed").value == "off"  # type: ignore[union-attr]
    assert "held for 1s" in rig.evaluations("evaluated")[1]["data"]["why"]

    rig.commit("set", "test.state", "off")
    rig.service.drain()
    again = rig.last_record("test.state").ts
    rig.commit("set", "test.state", "on")  # stops holding: the timer is cancelled
    rig.work()
    rig.clock.at_ms = again + 1100
    rig.work()
    assert rig.app.store.version("test.noticed") == 1
    assert "for-timer is cancelled" in rig.evaluations("evaluated")[-1]["data"]["why"]


def test_signal_promotion_fires_only_at_the_threshold(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    rules = """
  - id: death_cam
    when: {key: vision.dead, op: set}
    signal: {at_least: 3, confidence: 0.8, within: 10s}
    then:
      - mutate: {op: set, key: scene.name, value: Death cam}
"""
    rig = make_rig(tmp_path, redis_client, workspace, rules)

    def see(confidence: float) -> None:
        rig.commit(
            "set", "vision.dead", {"value": True, "confidence": confidence}, who="connector:cam"
        )
        rig.work()

    see(0.9)
    see(0.5)  # below the confidence: not counted
    see(0.95)
    assert rig.app.store.get("scene.name") is None
    whys = [r["data"]["why"] for r in rig.evaluations("evaluated")]
    assert whys[0].startswith("signal: 1 of 3") and whys[1].startswith("signal: 1 of 3")
    assert whys[2].startswith("signal: 2 of 3")
    see(0.85)
    assert rig.app.store.get("scene.name").value == "Death cam"  # type: ignore[union-attr]
    see(0.99)  # counting starts over after a promotion
    assert rig.app.store.version("scene.name") == 1


def test_cooldown_and_mode_single(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, post_rule(hook, "    cooldown: 30s\n"))
    rig.commit("set", "test.a", 1)
    rig.commit("set", "test.a", 2)
    rig.work()
    assert len(hook.requests) == 1
    assert "cooling down" in rig.evaluations("evaluated")[1]["data"]["why"]
    # single: while a run waits on the queue, another trigger for the same key is skipped
    rig2 = make_rig(tmp_path, redis_client, workspace + "b", post_rule(hook, "    mode: single\n"))
    rig2.commit("set", "test.b", 1)
    rig2.commit("set", "test.b", 2)
    rig2.service.drain()
    assert "mode single: a run is going" in rig2.evaluations("evaluated")[1]["data"]["why"]
    rig2.commit("set", "test.c", 3)  # another key: its own run
    rig2.work()
    assert len(hook.requests) == 3


@pytest.mark.parametrize(("mode", "runs"), [("parallel", 2), ("queued", 2), ("restart", 1)])
def test_modes_bound_the_runs_of_a_rule_and_key(
    tmp_path: Path,
    redis_client: Redis,
    workspace: str,
    hook: WebhookServer,
    mode: str,
    runs: int,
) -> None:
    rig = make_rig(
        tmp_path, redis_client, workspace, post_rule(hook, f"    mode: {mode}\n    max: 2\n")
    )
    for value in (1, 2, 3):
        rig.commit("set", "test.a", value)
    rig.work()
    assert len(hook.requests) == runs
    whys = [r["data"]["why"] for r in rig.evaluations("evaluated")]
    if mode == "restart":
        assert "stopped" in whys[1] and "stopped" in whys[2]
        assert hook.requests[0].json["value"] == 3
    else:
        assert f"mode {mode}: 2 runs already (max)" in whys[2]
    if mode == "queued":
        assert "after rule-" in whys[1]


def test_an_unset_optional_env_skips_the_step_and_values_from_env_are_masked(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    rules = """
  - id: notify
    when: {key: "test.*"}
    then:
      - action: http.post
        args: {url: "${DELIB_TEST_HOOK_URL:-}"}
      - action: log.write
        args: {message: "token ${DELIB_TEST_TOKEN}"}
"""
    env = {"DELIB_TEST_TOKEN": "tok-123456"}
    rig = make_rig(tmp_path, redis_client, workspace, rules, env)
    committed = rig.commit("set", "test.a", 1)
    rig.work()
    skipped = rig.evaluations("action.skipped")[0]["data"]
    assert skipped["why"] == "skipped: DELIB_TEST_HOOK_URL is not set"
    assert rig.evaluations("action.done")[0]["data"]["do"] == "log.write"
    stored = [
        str(v) for k in redis_client.scan_iter(f"*{workspace}*") for v in _values(redis_client, k)
    ]
    assert stored and not any("tok-123456" in v for v in stored)
    planned = rig.evaluations("evaluated")[0]["data"]["steps"][1]["args"]
    assert planned == {"message": "token ${DELIB_TEST_TOKEN}"}
    assert committed.request.correlation_id == rig.evaluations()[0]["corr"]


def _values(client: Redis, key: str) -> list[object]:
    kind = client.type(key)
    if kind == "stream":
        return [fields for _, fields in client.xrange(key)]
    if kind == "hash":
        return list(client.hgetall(key).values())
    if kind == "string":
        return [client.get(key)]
    return []


def test_a_failing_action_reports_the_connectors_words_and_later_steps_do_not_run(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    rules = f"""
  - id: notify
    when: {{key: "test.*"}}
    then:
      - action: http.post
        args: {{url: "{hook.url}/missing"}}
      - mutate: {{op: set, key: test.after, value: 1}}
"""
    rig = make_rig(tmp_path, redis_client, workspace, rules)
    rig.commit("set", "test.a", 1)
    rig.work()
    (failed,) = rig.evaluations("action.failed")
    assert "404" in failed["data"]["error"]
    assert rig.app.store.get("test.after") is None


def test_a_crashed_consumer_loses_no_mutation(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, post_rule(hook))
    rig.commit("set", "test.a", 1)
    # a consumer reads the record and dies before acknowledging it
    assert len(rig.service.consumer.read()) == 1
    assert rig.service.consumer.pending() == 1
    survivor = RuleService(Engine(rig.app.store, rig.app.rules, rig.queue), rig.queue, name="b")
    survivor.consumer.claim_idle_ms = 0  # (its usual wait: three leases)
    rig.service = survivor
    rig.work()
    assert len(hook.requests) == 1 and survivor.consumer.pending() == 0


def test_a_replaced_run_stops_before_its_next_step(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, post_rule(hook, "    mode: restart\n"))
    job_id = enqueued(rig)
    rig.engine.runs.request_stop(job_id)  # what a newer firing does to a run already going
    rig.work()
    assert hook.requests == []
    (skipped,) = rig.evaluations("action.skipped")
    assert skipped["data"]["why"].startswith("stopped: a newer run")


def test_for_without_to_starts_over_when_the_key_changes_again(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    rules = """
  - id: settled
    when: {key: test.state}
    for: 1s
    then:
      - mutate: {op: set, key: test.noticed, value: "{{ state['test.state'] }}"}
"""
    rig = make_rig(tmp_path, redis_client, workspace, rules)
    rig.commit("set", "test.state", "a")
    rig.service.drain()
    first = rig.last_record("test.state").ts
    while server_ms(redis_client) <= first:  # b lands at least a millisecond after a
        pass
    rig.commit("set", "test.state", "b")  # the new value must hold a whole second itself
    rig.service.drain()
    second = rig.last_record("test.state").ts
    assert second > first
    rig.clock.at_ms = first + 1000  # a's second is over, b's is not
    rig.work()
    assert rig.app.store.get("test.noticed") is None
    rig.clock.at_ms = second + 1000
    rig.work()
    assert rig.app.store.get("test.noticed").value == "b"  # type: ignore[union-attr]


def test_only_a_rules_own_derived_mutation_carries_a_chain_depth(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, post_rule(hook))
    rig.commit("set", "test.a", 1, meta={"depth": 99})  # a person cannot switch rules off
    rig.work()
    assert len(hook.requests) == 1 and rig.evaluations("cut") == []


def test_a_step_abandoned_mid_post_is_sent_again_with_the_same_idempotency_key(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    from rules.keys import RuleKeys
    from rules.worker.ledger import Lease, StepLedger

    rig = make_rig(tmp_path, redis_client, workspace, post_rule(hook))
    job_id = enqueued(rig)
    # what a worker killed during the POST leaves once its lease lapsed: the step started,
    # never done, and no lease
    lease = Lease(redis_client, RuleKeys(workspace).lease(job_id), "killed-worker", 30)
    assert lease.acquire()
    StepLedger(redis_client, RuleKeys(workspace), job_id, lease).claim(0)
    lease.release()
    rig.work()
    (request,) = hook.requests  # http.post is resend-safe: the receiver dedupes by the key
    assert request.header("Idempotency-Key") == f"{job_id}.0"
    assert rig.evaluations("action.done")[0]["data"]["result"] == {"status": 200}


def test_a_job_whose_lease_is_held_elsewhere_does_not_pass_for_done(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    from rules.keys import RuleKeys
    from rules.worker.ledger import Lease

    rig = make_rig(tmp_path, redis_client, workspace, post_rule(hook))
    job_id = enqueued(rig)
    other = Lease(redis_client, RuleKeys(workspace).lease(job_id), "another-worker", 30)
    assert other.acquire()
    try:
        rig.work()
        job = Job.fetch(job_id, connection=rig.queue.connection)
        assert hook.requests == [] and job.get_status().value != "finished"
    finally:
        other.release()
