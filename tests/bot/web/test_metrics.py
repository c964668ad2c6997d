"""``/metrics`` over real HTTP, parsed by the Prometheus client's own parser: the counters
move by exactly what a conversation with a model and the clicks on its proposal did, what
another process counted arrives, the gauges read what is there now; the token or a loopback
client is required; ``/health`` answers 200 while Redis does, 503 once it is gone."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families
from redis import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from rq import Queue

from bot.app import App, build_app
from bot.web.settings import WebSettings
from core.deliberation.actions import ActionType
from core.deliberation.messages import ActionClicked, UserSaid
from core.deliberation.view import Button, View
from core.llm.chat import ChatModel
from core.metrics import flush_all
from core.runtime.events import Event, OutcomeEvent
from core.runtime.runner import Runtime
from tests.bot.web.conftest import Site, serve_site, web_config
from tests.factories import actor
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.polling import wait_for
from tests.rules.rig import make_rig
from tests.servers.redis_process import RedisProcess
from tests.servers.webhook import WebhookServer

METRICS_TOKEN = "metrics-token-for-tests-0123456789"
ANN, MO = actor("user:ann"), actor("moderator:mo")
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(site: Site, **headers: str) -> Samples:
    """Every sample of ``/metrics``, by name and labels (the parser checks the format)."""
    answer = httpx.get(f"{site.base}/metrics", headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    samples: Samples = {}
    for family in text_string_to_metric_families(answer.text):
        assert family.name.startswith("deliberate_") and family.documentation, family.name
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    """A sample's value; a series not shown is 0 (a counter not counted yet)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def flushed(site: Site, **headers: str) -> Samples:
    flush_all()  # what this process counted: sent now, not within the second
    return scrape(site, **headers)


def with_model(app: App, server: OpenAIServer) -> Runtime:
    client = openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0)
    return app.runtime(ChatModel(client, "test-model", timeout_sec=5))


def button(events: list[Event], action: str) -> Button:
    return next(b for e in events if isinstance(e, View) for b in e.buttons if b.action == action)


def click(runtime: Runtime, b: Button, who: object, click_id: str) -> OutcomeEvent:
    msg = ActionClicked(
        action=b.action,
        target_id=b.target_id,
        expected_version=b.target_version,
        click_id=click_id,
        actor=who,
    )
    [done] = [e for e in runtime.send("s1", msg) if isinstance(e, OutcomeEvent)]
    return done


def test_a_conversation_and_its_clicks_move_the_counters_by_what_they_did(
    site: Site, openai_server: OpenAIServer
) -> None:
    """Ann asks for BRB; the model proposes ``scene.name`` (protected) through its tool;
    Ann's click is refused (protected), the moderator's commits it."""
    ws = {"workspace": site.app.store.workspace}
    before = flushed(site)
    for name in ("deliberate_turns_total", "deliberate_commits_total"):
        assert value(before, name, **ws) == 0 and (name, frozenset(ws.items())) in before
    openai_server.answer_with = proposing("scene.name", "BRB")
    runtime = with_model(site.app, openai_server)
    shown = runtime.send("s1", UserSaid(text="let's go brb", actor=ANN))

    talked = flushed(site)
    assert value(talked, "deliberate_turns_total", **ws) == 1
    labelled = {"label": "brainstorm", "classifier": "llm"}
    assert value(talked, "deliberate_classified_turns_total", **ws, **labelled) == 1
    for purpose, n in (("classify", 1), ("generate", 2)):  # generate: a tool round, then text
        ok = {"purpose": purpose, "outcome": "ok"}
        assert value(talked, "deliberate_model_calls_total", **ws, **ok) == n
        assert value(talked, "deliberate_model_call_seconds_count", **ws, purpose=purpose) == n
        inf = {"purpose": purpose, "le": "+Inf"}
        assert value(talked, "deliberate_model_call_seconds_bucket", **ws, **inf) == n
        assert value(talked, "deliberate_model_call_seconds_sum", **ws, purpose=purpose) > 0
    assert value(talked, "deliberate_proposals_total", **ws, event="created") == 1
    assert value(talked, "deliberate_proposals_pending", **ws) == 1
    assert value(talked, "deliberate_commits_total", **ws) == 0
    assert value(talked, "deliberate_log_length", **ws) == 0

    apply = button(shown, ActionType.APPLY_PROPOSAL)
    assert click(runtime, apply, ANN, "c1").reason == "protected"
    assert click(runtime, apply, MO, "c2").outcome == "committed"

    clicked = flushed(site)
    assert value(clicked, "deliberate_rejections_total", **ws, reason="protected") == 1
    assert value(clicked, "deliberate_commits_total", **ws) == 1
    assert value(clicked, "deliberate_proposals_total", **ws, event="applied") == 1
    assert value(clicked, "deliberate_proposals_pending", **ws) == 0
    assert value(clicked, "deliberate_log_length", **ws) == 1
    assert value(clicked, "deliberate_turns_total", **ws) == 1  # clicks are no turns
    assert 0 < value(clicked, "deliberate_redis_roundtrip_seconds") < 5


def test_a_failing_model_call_is_counted_as_a_failure(
    site: Site, openai_server: OpenAIServer
) -> None:
    openai_server.script = []  # every call answered with HTTP 500
    with_model(site.app, openai_server).send("s1", UserSaid(text="what now?", actor=ANN))
    samples = flushed(site)
    ws = site.app.store.workspace
    for purpose in ("classify", "generate"):
        failed = {"workspace": ws, "purpose": purpose, "outcome": "error"}
        assert value(samples, "deliberate_model_calls_total", **failed) == 1
        assert value(samples, "deliberate_model_calls_total", **failed | {"outcome": "ok"}) == 0
    classified = [
        labels
        for (name, labels), n in samples.items()
        if name == "deliberate_classified_turns_total" and n == 1
    ]
    assert [dict(labels)["classifier"] for labels in classified] == ["embedded"]


def test_what_another_process_counted_arrives_within_its_flush(site: Site, tmp_path: Path) -> None:
    """``deliberate state set`` commits in a process of its own, which sends its count as it
    exits; this process flushes nothing."""
    ws = site.app.store.workspace
    (tmp_path / "cli").mkdir()
    config = web_config(tmp_path / "cli", ws)
    argv = ["--workspace", ws, "--config", str(config), "state", "set"]
    argv += ["decision.db", "redis", "--actor", "user:ann"]
    subprocess.run([sys.executable, "-m", "bot.main", *argv], check=True, timeout=120)
    assert value(scrape(site), "deliberate_commits_total", workspace=ws) == 1
    assert value(scrape(site), "deliberate_log_length", workspace=ws) == 1


def test_counts_arrive_by_themselves_within_a_second_or_so(site: Site) -> None:
    """No flush is asked for: the flushing thread sends them (polled, not waited for)."""
    ws = site.app.store.workspace
    site.app.runtime(use_env=False).send("s1", UserSaid(text="hello there", actor=ANN))
    wait_for(
        lambda: value(scrape(site), "deliberate_turns_total", workspace=ws) == 1,
        "the turn to be counted",
        timeout=15,
    )


def test_rule_evaluations_steps_and_the_queue_depth_are_shown(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    with WebhookServer() as hook:
        rule = f"""
  - id: notify
    when: {{key: "test.*", op: set}}
    then:
      - action: http.post
        args: {{url: "{hook.hook_url}", json: {{key: "{{{{ mutation.key }}}}"}}}}
"""
        rig = make_rig(tmp_path, redis_client, workspace, rule)
        rig.commit("set", "test.a", 1)
        rig.work()
    queue: Queue = rig.app.queue()
    site = serve_site(rig.app)
    try:
        for _ in range(2):  # runs waiting for a worker (none runs here)
            queue.enqueue("rules.worker.job.run_rule", {"workspace": workspace})
        samples = flushed(site)
        ws = {"workspace": workspace}
        assert value(samples, "deliberate_rule_evaluations_total", **ws, outcome="fired") == 1
        assert value(samples, "deliberate_rule_evaluations_total", **ws, outcome="skipped") == 0
        assert value(samples, "deliberate_rule_steps_total", **ws, outcome="done") == 1
        assert value(samples, "deliberate_queue_depth", **ws, queue=queue.name) == 2
        queue.empty()
        assert value(scrape(site), "deliberate_queue_depth", **ws, queue=queue.name) == 0
    finally:
        queue.delete(delete_jobs=True)
        site.served.stop()


# --- who may see them ------------------------------------------------------------------------


@pytest.fixture
def guarded_site(web_app: App) -> Iterator[Site]:
    running = serve_site(web_app, WebSettings(metrics_token=METRICS_TOKEN))
    yield running
    running.served.stop()


def test_with_a_token_set_the_scraper_must_bring_it(guarded_site: Site) -> None:
    url = f"{guarded_site.base}/metrics"
    for given in (None, "Bearer wrong-token-0123456789abcdef", f"Basic {METRICS_TOKEN}"):
        answer = httpx.get(url, headers={} if given is None else {"Authorization": given})
        assert answer.status_code == 401, given
        assert answer.headers["www-authenticate"].startswith("Bearer")
        assert "deliberate_" not in answer.text
    samples = scrape(guarded_site, Authorization=f"Bearer {METRICS_TOKEN}")
    assert ("deliberate_redis_roundtrip_seconds", frozenset()) in samples
    # a header that is not ASCII is refused, not a server error
    odd = httpx.get(url, headers={"Authorization": "Bearer t\u00f6ken".encode("latin-1")})
    assert odd.status_code == 401


def test_without_a_token_only_a_loopback_client_gets_them(web_app: App) -> None:
    site = serve_site(web_app)
    try:
        app = site.flask.test_client()
        far = app.get("/metrics", environ_base={"REMOTE_ADDR": "203.0.113.7"})
        assert far.status_code == 403 and b"DELIBERATE_METRICS_TOKEN" in far.data
        near = app.get("/metrics", environ_base={"REMOTE_ADDR": "::1"})
        assert near.status_code == 200 and b"deliberate_commits_total" in near.data
    finally:
        site.served.stop()
    guarded = serve_site(web_app, WebSettings(metrics_token=METRICS_TOKEN))
    try:
        app = guarded.flask.test_client()
        bearer = {"Authorization": f"Bearer {METRICS_TOKEN}"}
        far = app.get("/metrics", environ_base={"REMOTE_ADDR": "203.0.113.7"}, headers=bearer)
        assert far.status_code == 200  # with the token, from anywhere
    finally:
        guarded.served.stop()


# --- health --------------------------------------------------------------------------------------


def test_health_is_200_while_redis_answers_and_503_once_it_is_gone(
    tmp_path: Path, workspace: str
) -> None:
    server = RedisProcess(tmp_path / "redis")
    try:
        client = Redis(
            port=server.port, decode_responses=True, socket_timeout=2, retry=Retry(NoBackoff(), 0)
        )
        app = build_app(workspace, web_config(tmp_path, workspace), client=client)
        site = serve_site(app)
        try:
            assert httpx.get(f"{site.base}/health").status_code == 200
            server.stop()
            gone = httpx.get(f"{site.base}/health", timeout=30)
            assert gone.status_code == 503 and "redis does not answer" in gone.text
            assert httpx.get(f"{site.base}/metrics", timeout=30).status_code == 503
        finally:
            site.served.stop()
    finally:
        server.stop()
