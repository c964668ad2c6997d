"""The model's tools against a real store: reads hide secrets, writes go through the gateway
as the agent (proposals, or refusals), and whatever the model writes as arguments is checked,
never trusted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from core.llm.replies import ToolCall
from core.llm.tools import AgentTools
from tests.conftest import write_config
from tests.factories import actor, mutation
from tests.reads import pending_proposals


def tools(app: App) -> AgentTools:
    return AgentTools(app.gateway, actor("agent:assistant"))


def call(app: App, name: str, arguments: object) -> tuple[bool, object]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    result = tools(app).call(ToolCall("c1", name, text), "corr-1")
    return result.ok, result.result


def test_reads_return_values_and_versions_but_never_a_secret(app: App) -> None:
    app.gateway.propose(mutation("set", "decision.db", "postgres"))
    app.gateway.propose(mutation("set", "secret.key", "sk-1", "admin:root"))
    ok, found = call(app, "getState", {"keys": ["decision.db", "secret.key", "nope", "bad key!"]})
    assert ok and found == {
        "decision.db": {"key": "decision.db", "value": "postgres", "version": 1},
        "secret.key": None,  # as if absent: not even its existence shows
        "nope": None,
        "bad key!": None,
    }
    ok, entries = call(app, "getStatePrefix", {"prefix": ""})
    assert ok and [e["key"] for e in entries] == ["decision.db"]


def test_writes_become_proposals_and_commit_nothing(app: App) -> None:
    ok, result = call(app, "proposeMutation", {"op": "set", "key": "scene.name", "value": "BRB"})
    assert ok and result["outcome"] == "pending"
    ok, result = call(
        app, "compareAndSet", {"key": "decision.db", "expectedVersion": 0, "value": "x"}
    )
    assert ok and result["outcome"] == "pending"
    assert app.store.entries() == [] and len(pending_proposals(app.redis, app.store.workspace)) == 2


def test_what_policy_denies_an_agent_is_refused(app: App) -> None:
    ok, result = call(app, "proposeMutation", {"op": "set", "key": "secret.key", "value": "x"})
    assert not ok and result["reason"] == "agent_denied"
    ok, result = call(app, "proposeMutation", {"op": "set", "key": "scene.name", "value": "Nope"})
    assert not ok and result["reason"] == "schema"


@pytest.mark.parametrize(
    ("name", "arguments", "problem"),
    [
        ("getState", "{not json", "arguments are not JSON"),
        ("getState", {"keys": []}, "bad arguments"),
        ("proposeMutation", {"op": "explode", "key": "scene.name"}, "bad arguments"),
        ("proposeMutation", {"op": "set", "key": "no spaces allowed"}, "bad mutation"),
        ("compareAndSet", {"key": "decision.db", "value": 1}, "bad arguments"),
        ("proposeMutation", {"op": "set", "key": "scene.name", "actor": "admin"}, "bad arguments"),
        ("dropDatabase", {}, "no tool named"),
    ],
)
def test_bad_calls_get_an_error_and_change_nothing(
    app: App, name: str, arguments: object, problem: str
) -> None:
    ok, result = call(app, name, arguments)
    assert not ok and str(result).startswith(problem)
    assert pending_proposals(app.redis, app.store.workspace) == [] and len(app.log) == 0


def test_a_write_result_never_carries_a_value_back(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    config = "policy:\n  keys:\n    - {pattern: 'vault.*', agent: commit, secret: true}\n"
    app = build_app(workspace, write_config(tmp_path, config), client=redis_client)
    app.gateway.propose(mutation("set", "vault.list", ["sk-live-SECRET"], "user:alice"))
    ok, result = call(app, "proposeMutation", {"op": "append", "key": "vault.list", "value": "x"})
    assert ok and result["outcome"] == "committed" and result["version"] == 2
    assert "sk-live-SECRET" not in json.dumps(result)


PROPOSE = '{"op": "set", "key": "decision.db", "value": %s}'


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("proposeMutation", PROPOSE % "NaN"),
        ("proposeMutation", PROPOSE % "Infinity"),
        ("proposeMutation", PROPOSE % '{"replicas": [1, -Infinity]}'),
        ("proposeMutation", PROPOSE % "1e400"),  # a float that overflows to infinity
        ("proposeMutation", '{"op": "incr", "key": "bench.count", "value": NaN}'),
        ("proposeMutation", '{"op": "set", "key": "decision.db", "value": 1, "ttlSec": NaN}'),
        ("compareAndSet", '{"key": "decision.db", "expectedVersion": 0, "value": Infinity}'),
        ("compareAndSet", '{"key": "decision.db", "expectedVersion": NaN, "value": 1}'),
        ("getState", '{"keys": ["decision.db", NaN]}'),
        ("proposeMutation", PROPOSE % ("[" * 100_000 + "]" * 100_000)),
    ],
    ids=[
        "nan",
        "inf",
        "nested-inf",
        "overflow",
        "incr-nan",
        "ttl-nan",
        "cas-inf",
        "version-nan",
        "keys-nan",
        "deep",
    ],
)
def test_a_number_json_has_not_is_a_tool_error_never_an_exception(
    app: App, name: str, arguments: str
) -> None:
    """Python's json reads NaN, Infinity and -Infinity (and 1e400 as infinity): none is
    JSON, and none may reach the gateway, the store or an exception."""
    ok, result = call(app, name, arguments)
    assert not ok and str(result).startswith(("arguments are not JSON", "bad arguments"))
    assert pending_proposals(app.redis, app.store.workspace) == [] and len(app.log) == 0


def test_the_model_may_propose_a_change_for_a_while(app: App) -> None:
    ok, result = call(
        app, "proposeMutation", {"op": "set", "key": "scene.name", "value": "BRB", "for": "30m"}
    )
    assert ok and result["outcome"] == "pending"
    (proposal,) = app.gateway.proposals.listed()
    assert (
        proposal.mutation.for_sec == 1800 and proposal.summary() == "set scene.name = BRB for 30m"
    )
    ok, result = call(
        app, "proposeMutation", {"op": "set", "key": "scene.name", "value": "BRB", "for": "soon"}
    )
    assert not ok and str(result).startswith("bad mutation: 'soon' is not a duration")
