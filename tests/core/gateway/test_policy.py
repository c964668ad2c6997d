"""The policy matrix on the shipped config: allowlist, schemas, roles, protected keys, agents,
TTL rules, rate limits and secrets; plus custom roles from a config file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.app import App, build_app
from core.config.core_config import load_config
from core.config.roles import Membership, RoleBinding, roles_for
from core.gateway.outcome import Pending
from core.gateway.policy import Policy
from core.state.commit_result import Committed, Rejected, RejectReason
from core.state.entry import Entry
from tests.conftest import write_config
from tests.factories import actor, mutation

COMMIT, PENDING = "committed", "pending"

MATRIX: list[tuple[str, str, str, Any, str]] = [
    # who, op, key, value, expected outcome or reject reason
    ("user:alice", "set", "decision.db-engine", "postgres", COMMIT),
    ("user:alice", "set", "decision.db-engine", 5, "schema"),
    ("user:alice", "set", "decision.db-engine", "x" * 2001, "schema"),
    ("user:alice", "set", "unknown.key", "x", "not_allowed"),
    ("user:alice", "set", "decisionx", "x", "not_allowed"),
    ("user:alice", "set", "scene.name", "BRB", COMMIT),
    ("user:alice", "set", "scene.name", "Disco", "schema"),
    ("user:alice", "set", "stream.state", "off", "protected"),
    ("user:alice", "set", "stream.end", True, "protected"),
    ("user:alice", "set", "clip.delete", "clip-1", "protected"),
    ("moderator:mo", "set", "stream.state", "off", COMMIT),
    ("moderator:mo", "set", "stream.state", "paused", "schema"),
    ("admin:root", "set", "clip.delete", "clip-1", COMMIT),
    ("automation:rule", "set", "stream.state", "off", "protected"),
    ("system:cli", "set", "stream.end", True, "protected"),
    ("agent:llm", "set", "scene.name", "BRB", PENDING),
    ("agent:llm", "set", "stream.state", "off", PENDING),
    ("agent:llm", "set", "decision.db-engine", "postgres", PENDING),
    ("agent:llm", "set", "vision.dead", {"value": True}, "agent_denied"),
    ("agent:llm", "set", "obs.connected", True, "agent_denied"),
    ("agent:llm", "set", "scene.name", "Disco", "schema"),
    ("user:alice", "set", "obs.connected", True, "forbidden"),
    ("connector:obs", "set", "obs.connected", True, COMMIT),
    ("connector:obs", "set", "decision.db-engine", "x", "forbidden"),
    ("connector:vision", "set", "vision.dead", {"value": True, "confidence": 0.9}, COMMIT),
    ("connector:vision", "set", "vision.dead", "yes", "schema"),
    ("automation:rule", "set", "decision.db-engine", "postgres", COMMIT),
    ("user:alice", "incr", "decision.db-engine", 1, "schema"),
    ("user:alice", "append", "artifact.design-doc", "a paragraph", COMMIT),
    ("user:alice", "append", "artifact.design-doc", 5, "schema"),
    ("user:alice", "set", "artifact.design-doc", ["a", 1], "schema"),
    ("user:alice", "set", "entity.task.t1", {"title": "write it"}, COMMIT),
    ("user:alice", "set", "entity.task.t1", "not an object", "schema"),
    ("user:alice", "set", "secret.stream-key", "abc", "forbidden"),
    ("admin:root", "set", "secret.stream-key", "abc", COMMIT),
    ("user:alice", "delete", "decision.db-engine", None, "not_found"),
    ("user:alice", "incr", "bench.counter", 1, COMMIT),
    ("user:alice", "incr", "bench.counter", 0.5, "schema"),
]


@pytest.mark.parametrize(("who", "op", "key", "value", "expected"), MATRIX)
def test_policy_matrix(app: App, who: str, op: str, key: str, value: Any, expected: str) -> None:
    outcome = app.gateway.propose(mutation(op, key, value, who))
    if expected == COMMIT:
        assert isinstance(outcome, Committed), outcome
    elif expected == PENDING:
        assert isinstance(outcome, Pending), outcome
        assert app.store.get(key) is None
    else:
        assert isinstance(outcome, Rejected), outcome
        assert outcome.reason is RejectReason(expected)
        assert outcome.message
        assert app.store.get(key) is None


def test_a_user_holding_the_moderator_role_may_change_protected_keys(app: App) -> None:
    mod = actor("user:maria", "moderator")
    assert isinstance(app.gateway.propose(mutation("set", "stream.state", "off", mod)), Committed)


def test_the_policy_default_ttl_applies_and_its_maximum_holds(app: App) -> None:
    signal = app.gateway.propose(mutation("set", "vision.dead", {"v": 1}, "connector:cam"))
    assert isinstance(signal, Committed) and signal.entry is not None
    assert signal.entry.expires_at == signal.entry.updated_at + 10_000
    too_long = app.gateway.propose(
        mutation("set", "vision.dead", {"v": 1}, "connector:cam", ttl_sec=301)
    )
    assert isinstance(too_long, Rejected) and "300" in too_long.message


def test_the_rate_limit_on_a_disruptive_key_is_per_actor(app: App) -> None:
    scenes = ["Live", "BRB"] * 3
    for scene in scenes:
        assert isinstance(
            app.gateway.propose(mutation("set", "scene.name", scene, "user:a")), Committed
        )
    limited = app.gateway.propose(mutation("set", "scene.name", "Live", "user:a"))
    assert isinstance(limited, Rejected) and limited.reason is RejectReason.RATE_LIMITED
    assert "try again in" in limited.message
    assert isinstance(
        app.gateway.propose(mutation("set", "scene.name", "Live", "user:b")), Committed
    )
    assert app.store.get("scene.name").version == 7  # type: ignore[union-attr]


def test_a_value_over_the_size_limit_is_rejected(app: App) -> None:
    big = {"text": "x" * 20_000}
    outcome = app.gateway.propose(mutation("set", "entity.task.big", big))
    assert isinstance(outcome, Rejected) and "bytes" in outcome.message


def test_secret_keys_are_hidden_from_agents() -> None:
    policy = Policy(load_config().policy)
    who = actor("admin:root")
    entries = [
        Entry(key=k, value=1, version=1, updated_at=1, updated_by=who)
        for k in ("secret.stream-key", "decision.db")
    ]
    assert [e.key for e in policy.visible_to_agent(entries)] == ["decision.db"]
    assert policy.is_secret("secret.stream-key") and not policy.is_secret("decision.db")


CUSTOM = """
roles:
  producer:
    members: ["slack:U1"]
    groups: ["discord:130000000000000042"]
policy:
  keys:
    - pattern: "show.*"
      writers: [producer]
      agent: commit
    - pattern: "show.locked"
      protected: true
    - pattern: "notes.*"
      type: string
"""


def test_custom_roles_and_agent_commit_from_a_config_file(
    tmp_path: Path, redis_client: Any, workspace: str
) -> None:
    app = build_app(workspace, write_config(tmp_path, CUSTOM), client=redis_client)
    producer = actor("user:pat", "producer")
    assert isinstance(
        app.gateway.propose(mutation("set", "show.title", "Ep 1", producer)), Committed
    )
    denied = app.gateway.propose(mutation("set", "show.title", "Ep 2", "user:bob"))
    assert isinstance(denied, Rejected) and denied.reason is RejectReason.FORBIDDEN
    by_agent = app.gateway.propose(mutation("set", "show.title", "Ep 3", "agent:llm"))
    assert isinstance(by_agent, Committed)
    # the first matching pattern wins: show.* shadows the protected show.locked rule
    assert isinstance(app.gateway.propose(mutation("set", "show.locked", 1, producer)), Committed)


def test_roles_for_maps_platform_members_and_groups() -> None:
    bindings = {
        "moderator": RoleBinding(members=["slack:U1"], groups=["discord:Mods"]),
        "admin": RoleBinding(members=["discord:42"]),
    }

    def on(platform: str, user: str, names: set[str] = set()) -> Membership:  # noqa: B006
        return Membership(platform, user, frozenset(), frozenset(names))

    assert roles_for(bindings, on("slack", "U1")) == ("moderator",)
    assert roles_for(bindings, on("discord", "7", {"Mods"})) == ("moderator",)
    assert roles_for(bindings, on("discord", "42", {"Mods"})) == ("moderator", "admin")
    assert roles_for(bindings, on("discord", "U1")) == ()
    assert roles_for(bindings, on("slack", "U2", {"Mods"})) == ()


LISTS = """
policy:
  max_value_bytes: 64
  keys:
    - pattern: "doc.*"
      type: array
      items: {type: string}
      max_length: 2
    - pattern: "big.*"
      type: array
"""


def test_appends_cannot_grow_a_list_past_its_limits(
    tmp_path: Path, redis_client: Any, workspace: str
) -> None:
    app = build_app(workspace, write_config(tmp_path, LISTS), client=redis_client)
    for item in ("one", "two"):
        assert isinstance(app.gateway.propose(mutation("append", "doc.a", item)), Committed)
    third = app.gateway.propose(mutation("append", "doc.a", "three"))
    assert isinstance(third, Rejected) and third.reason is RejectReason.SCHEMA
    for _ in range(2):
        assert isinstance(app.gateway.propose(mutation("append", "big.a", "x" * 25)), Committed)
    over = app.gateway.propose(mutation("append", "big.a", "x" * 25))
    assert isinstance(over, Rejected) and "more than the 64 allowed" in over.message
    assert app.store.get("doc.a").value == ["one", "two"]  # type: ignore[union-attr]
    assert len(app.store.get("big.a").value) == 2  # type: ignore[union-attr, arg-type]


def test_incr_and_append_on_a_key_typed_otherwise_say_the_type_refuses_them(
    app: App,
) -> None:
    """``incr needs a number, and this key holds string`` was said of a key never set: it
    holds nothing. What refuses it is the policy's type for the key, set or not; said in
    plain words, naming the key, and nothing is written."""
    for key in ("decision.never-set", "decision.set"):
        if key == "decision.set":
            assert isinstance(app.gateway.propose(mutation("set", key, "postgres")), Committed)
        version = app.store.version(key)
        refused = app.gateway.propose(mutation("incr", key, 1))
        assert isinstance(refused, Rejected) and refused.reason is RejectReason.SCHEMA
        assert refused.message == (
            f"{key}: incr needs a number, and the policy makes this key text (type: string), "
            "set or not; incr works on keys of type integer, number or any"
        )
        assert app.store.version(key) == version
    appended = app.gateway.propose(mutation("append", "decision.never-set", "x"))
    assert isinstance(appended, Rejected) and appended.message == (
        "decision.never-set: append needs a list, and the policy makes this key text "
        "(type: string), set or not; append works on keys of type array or any"
    )
    assert app.store.get("decision.never-set") is None
    assert [r.mutation.key for r in app.log.latest(10)] == ["decision.set"]  # only the set
