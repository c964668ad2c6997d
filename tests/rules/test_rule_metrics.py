"""What the rules count: each evaluation by outcome (fired, skipped, cut) and each step of
a run by outcome (done, failed), where the engine and the workers record them. Real Redis,
a real RQ queue and worker, a local webhook receiver."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from core.metrics import REJECTIONS, RULE_EVALUATIONS, RULE_STEPS, Counter, Counts
from tests.core.metrics.counted import counted
from tests.rules.rig import Rig, make_rig
from tests.servers.webhook import WebhookServer


@pytest.fixture
def hook() -> Iterator[WebhookServer]:
    with WebhookServer() as server:
        yield server


def rules(hook: WebhookServer) -> str:
    return f"""
  - id: notify
    when: {{key: "test.*", op: set}}
    then:
      - action: http.post
        args: {{url: "{hook.hook_url}", json: {{key: "{{{{ mutation.key }}}}"}}}}
  - id: never
    when: {{key: "test.*", op: set}}
    if: {{state: {{test.never: true}}}}
    then:
      - action: http.post
        args: {{url: "{hook.hook_url}", json: {{never: true}}}}
  - id: refused
    when: {{key: test.b, op: set}}
    then:
      - mutate: {{op: set, key: nowhere.x, value: 1}}
"""


def outcomes(seen: Counts, counter: Counter) -> dict[str, int]:
    return {labels[0]: n for labels, n in seen.series(counter).items() if n}


def counts(rig: Rig) -> Counts:
    return counted(rig.app.redis, rig.app.store.workspace)


def test_evaluations_and_steps_are_counted_by_outcome(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    rig = make_rig(tmp_path, redis_client, workspace, rules(hook))
    rig.commit("set", "test.a", 1)
    rig.commit("set", "test.b", 2)
    rig.work()
    assert len(hook.requests) == 2
    seen = counts(rig)
    assert outcomes(seen, RULE_EVALUATIONS) == {"fired": 3, "skipped": 2}
    assert outcomes(seen, RULE_STEPS) == {"done": 2, "failed": 1}
    assert outcomes(seen, REJECTIONS) == {"not_allowed": 1}  # the refused step's mutation


def test_a_loop_cut_is_counted(tmp_path: Path, redis_client: Redis, workspace: str) -> None:
    loop = """
  - id: ping
    when: {key: test.ping}
    then:
      - mutate: {op: incr, key: test.pong}
  - id: pong
    when: {key: test.pong}
    then:
      - mutate: {op: incr, key: test.ping}
"""
    rig = make_rig(tmp_path, redis_client, workspace, loop, automation="  max_chain_depth: 2\n")
    rig.commit("incr", "test.ping", 1)
    rig.work()
    seen = counts(rig)
    assert outcomes(seen, RULE_EVALUATIONS) == {"fired": 2, "cut": 1}
    assert outcomes(seen, RULE_STEPS) == {"done": 2}
