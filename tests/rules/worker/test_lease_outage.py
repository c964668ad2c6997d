"""A run's lease across a Redis outage, through a TCP proxy the test cuts: a renewal that
fails is retried and the lease kept when the link comes back within the ttl; past the ttl
the lease is lost, and the run starts no further step."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from rules.keys import RuleKeys
from rules.worker.job import run_rule
from rules.worker.ledger import Lease, LeaseLost
from tests.polling import wait_for
from tests.rules.rig import make_rig
from tests.servers.http import Request, Response
from tests.servers.tcp_proxy import RedisProxy
from tests.servers.webhook import WebhookServer


@pytest.fixture
def proxy(server_redis: Redis) -> Iterator[RedisProxy]:
    with RedisProxy(server_redis) as proxy:
        yield proxy


def test_a_renewal_cut_off_for_less_than_the_ttl_is_retried_and_the_lease_kept(
    server_redis: Redis, workspace: str, proxy: RedisProxy
) -> None:
    key = RuleKeys(workspace).lease("job-outage")
    lease = Lease(proxy.client(), key, "worker", 3)
    assert lease.acquire()
    try:
        renewed = lease.renewals
        wait_for(lambda: lease.renewals > renewed)  # renewed just now: a whole ttl ahead
        proxy.cut()
        wait_for(lambda: lease.failures >= 2)  # the renewal failed, and its retry too
        assert lease.held and server_redis.exists(key)
        proxy.restore()
        wait_for(lambda: lease.renewals > renewed + 1)
        assert lease.held and not lease.lost
        assert lease.token is not None and server_redis.get(key) == lease.token.decode()
        renewed = lease.renewals
        wait_for(lambda: lease.renewals > renewed)  # and it goes on renewing
    finally:
        lease.release()
    assert not server_redis.exists(key)


def test_a_lease_not_renewed_within_its_ttl_is_lost_for_good(
    server_redis: Redis, workspace: str, proxy: RedisProxy
) -> None:
    key = RuleKeys(workspace).lease("job-long-outage")
    lease = Lease(proxy.client(), key, "worker", 2)
    assert lease.acquire()
    try:
        proxy.cut()
        wait_for(lambda: lease.lost)
        assert not lease.held
        # given up no later than Redis lets it lapse: by then it has at most moments left
        assert server_redis.pttl(key) < 1000
        wait_for(lambda: not server_redis.exists(key))
        proxy.restore()
        assert not lease.held  # the link is back; the lease stays lost
    finally:
        lease.release()


def test_a_network_that_drops_packets_silently_loses_the_lease_without_hanging(
    server_redis: Redis, workspace: str, proxy: RedisProxy
) -> None:
    """No error, no reset: the bytes just stop. The client has no socket timeout (as a
    worker's has none); the lease's own client times out, so the renewal is retried, the
    lease is lost in time, and releasing it returns."""
    key = RuleKeys(workspace).lease("job-blackhole")
    client = proxy.client(socket_timeout=None, socket_connect_timeout=None)
    lease = Lease(client, key, "worker", 2)
    assert lease.acquire()
    released = threading.Event()
    try:
        proxy.freeze()
        wait_for(lambda: lease.lost)
        assert not lease.held and lease.failures > 0

        def release() -> None:
            lease.release()
            released.set()

        threading.Thread(target=release).start()
        assert released.wait(10), "release() hung on a silent network"
    finally:
        proxy.thaw()
        if not released.is_set():
            lease.release()


TWO_POSTS = """
  - id: twice
    when: {{key: test.a, op: set}}
    then:
      - action: http.post
        args: {{url: "{url}/first", json: 1}}
      - action: http.post
        args: {{url: "{url}/second", json: 2}}
"""


def test_a_run_whose_lease_lapsed_during_an_outage_starts_no_further_step(
    tmp_path: Path, server_redis: Redis, workspace: str, proxy: RedisProxy
) -> None:
    arrived, go = threading.Event(), threading.Event()

    def first(request: Request) -> Response:
        arrived.set()
        go.wait(30)
        return Response(200, {"ok": True})

    with WebhookServer() as hook:
        hook.route("POST", "/first", first)
        hook.route("POST", "/second", Response(200, {"ok": True}))
        client = proxy.client(decode_responses=True)
        rig = make_rig(
            tmp_path,
            client,
            workspace,
            TWO_POSTS.format(url=hook.url),
            automation="  retries: 0\n  timeout_sec: 60\n  lease_sec: 2\n",
        )
        committed = rig.commit("set", "test.a", 1)
        job_id = "rule-outage-run"
        payload = {
            "workspace": workspace,
            "rule": "twice",
            "logId": rig.last_record("test.a").log_id,
            "depth": 0,
            "correlationId": committed.request.correlation_id,
            "key": "test.a",
            "jobId": job_id,
        }
        raised: list[BaseException] = []

        def work() -> None:
            try:
                run_rule(payload)
            except BaseException as exc:
                raised.append(exc)

        runner = threading.Thread(target=work)
        runner.start()
        assert arrived.wait(20), "the run never reached the first step"
        proxy.cut()  # during the first step's call, longer than the lease's ttl
        keys = RuleKeys(workspace)
        wait_for(lambda: not server_redis.exists(keys.lease(job_id)))
        proxy.restore()
        go.set()
        runner.join(30)
    assert not runner.is_alive()
    assert [type(exc) for exc in raised] == [LeaseLost]
    assert [r.path for r in hook.requests] == ["/first"]  # the second step never started
    # a worker that lost its lease writes nothing: the step stays started, so whoever takes
    # the run over reconciles it rather than running it blind
    steps = server_redis.hgetall(keys.steps(job_id))
    assert steps == {"0": '{"state":"started"}'}
    (done,) = rig.evaluations("action.done")
    assert done["data"]["step"] == 0 and "lost the run's lease" in done["data"]["why"]
