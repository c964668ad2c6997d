"""Loading the config file: the shipped one works, and a bad one fails at load naming the
file, the line and the field, every problem at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis import Redis

from core.config.core_config import CoreConfig, load_config
from core.errors import ConfigError
from core.state.compaction import Retention
from core.state.limits import Durability
from tests.conftest import write_config

KEY_FIELDS = (  # what a policy pattern takes, as a file writes them
    "type:, enum:, max_length:, items:, pattern:, description:, writers:, protected:, agent:, "
    "secret:, rate_limit:, ttl:, revert_after_sec:, approval:"
)


def issues_of(tmp_path: Path, text: str) -> list[str]:
    path = write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return [str(issue) for issue in caught.value.issues]


def test_the_shipped_config_loads_with_both_packs() -> None:
    config = load_config()
    patterns = [rule.pattern for rule in config.policy.keys]
    for pattern in (
        "decision.*",
        "artifact.*",
        "entity.task.*",
        "scene.name",
        "stream.state",
        "stream.end",
        "clip.delete",
        "vision.*",
        "obs.connected",
    ):
        assert pattern in patterns
    protected = {r.pattern for r in config.policy.keys if r.protected}
    assert protected == {"stream.state", "stream.end", "clip.delete"}


def test_an_empty_file_is_the_shipped_config(tmp_path: Path) -> None:
    # files merge on top of the shipped defaults (tests/core/config/test_layers.py)
    empty = load_config(write_config(tmp_path, ""))
    assert empty.model_dump() == load_config().model_dump() != CoreConfig().model_dump()


def test_a_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    [issue] = issues_of(tmp_path, "policy:\n  keys:\n    - pattern: a.*\n      type: [string\n")
    assert issue.startswith(f"{tmp_path / 'deliberate.yaml'}:")
    assert "YAML syntax" in issue
    assert ":5:" in issue or ":4:" in issue


@pytest.mark.parametrize("character", ["\x01", "\x7f", "\ufffe"])
def test_a_character_yaml_refuses_is_an_error_naming_the_file(
    tmp_path: Path, character: str
) -> None:
    """Such a character failed the pure-Python parser as it started, outside the handling of
    its errors: a traceback, not a configuration error."""
    [issue] = issues_of(tmp_path, f"policy:\n  keys:\n    - pattern: a{character}b\n")
    assert issue.startswith(f"{tmp_path / 'deliberate.yaml'}:")
    assert "YAML" in issue


def test_a_misspelled_field_names_file_line_and_field(tmp_path: Path) -> None:
    text = (
        "policy:\n  keys:\n    - pattern: decision.*\n    - pattern: stream.state\n"
        "      protectd: true\n"
    )
    [issue] = issues_of(tmp_path, text)
    assert issue == (
        f"{tmp_path / 'deliberate.yaml'}:5: policy.keys[1].protectd: is not a field here "
        "(did you mean protected:?)"
    )
    # a name close to none: every field a pattern takes
    [issue] = issues_of(tmp_path, text.replace("protectd", "guarded"))
    assert issue.endswith(
        f"policy.keys[1].guarded: is not a field here (expected one of {KEY_FIELDS})"
    )


def test_an_enum_value_of_the_wrong_type_points_at_its_rule(tmp_path: Path) -> None:
    text = (
        "policy:\n  keys:\n    - pattern: stream.state\n      type: string\n"
        "      enum: [live, off]\n"
    )
    [issue] = issues_of(tmp_path, text)
    assert ":3: policy.keys[0]:" in issue
    assert "enum value False must be string" in issue and "quote it" in issue


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    text = (
        "store:\n  checkpoint_every: -1\npolicy:\n  keys:\n"
        "    - pattern: a.*\n      type: text\n"
        "    - pattern: b.*\n      agent: maybe\n"
        "    - type: string\n"
    )
    issues = issues_of(tmp_path, text)
    fields = [i.split(": ", 2)[0].split(":")[-1] + ":" + i.split(": ", 2)[1] for i in issues]
    assert fields == [
        "2:store.checkpoint_every",
        "6:policy.keys[0].type",
        "8:policy.keys[1].agent",
        "9:policy.keys[2].pattern",
    ]


def test_a_duplicate_key_is_an_error(tmp_path: Path) -> None:
    [issue] = issues_of(tmp_path, "policy:\n  max_value_bytes: 100\n  max_value_bytes: 200\n")
    assert ":3: policy.max_value_bytes: duplicate key" in issue


def test_an_unknown_writer_role_is_named(tmp_path: Path) -> None:
    text = (
        "roles:\n  producer: {}\npolicy:\n  keys:\n    - pattern: a.*\n"
        "      writers: [producer, moderater]\n"
    )
    [issue] = issues_of(tmp_path, text)
    assert ":6: policy.keys[0].writers[1]: unknown role 'moderater'" in issue
    assert "producer" in issue


def test_a_pattern_no_key_can_match_is_rejected(tmp_path: Path) -> None:
    [issue] = issues_of(tmp_path, "policy:\n  keys:\n    - pattern: 'has space.*'\n")
    assert ":3: policy.keys[0]:" in issue and "has space" in issue


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml: cannot read"):
        load_config(tmp_path / "nope.yaml")


def test_a_file_that_is_not_a_mapping_is_rejected(tmp_path: Path) -> None:
    [issue] = issues_of(tmp_path, "- just\n- a list\n")
    assert "must be a mapping of sections" in issue


def test_an_unknown_section_is_rejected(tmp_path: Path) -> None:
    [issue] = issues_of(tmp_path, "polcy:\n  keys: []\n")
    assert issue.endswith(":1: polcy: is not a field here (did you mean policy:?)")
    [issue] = issues_of(tmp_path, "extras:\n  keys: []\n")
    assert issue.endswith(
        ":1: extras: is not a field here (expected one of version:, store:, sessions:, "
        "deliberation:, beats:, actions:, perception:, policy:, roles:, tenants:, automation:, "
        "rules:)"
    )


def test_a_recursive_alias_is_an_error(tmp_path: Path) -> None:
    issues = issues_of(tmp_path, "policy: &p\n  keys:\n    - *p\n")
    assert any("refers to a value that contains it" in i for i in issues)


def test_an_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for n in range(1, 9):
        refs = ", ".join([f"*a{n - 1}"] * 10)
        lines.append(f"a{n}: &a{n} [{refs}]")
    lines.append("policy: {keys: *a8}")
    [issue] = issues_of(tmp_path, "\n".join(lines) + "\n")
    assert "more than 100000 values once aliases are expanded" in issue


def test_merged_keys_may_be_overridden(tmp_path: Path) -> None:
    text = (
        "policy:\n  keys:\n    - &base {pattern: 'a.*', type: string}\n"
        "    - <<: *base\n      pattern: 'b.*'\n"
    )
    config = load_config(write_config(tmp_path, text))
    # (new patterns come before the shipped ones, in the file's order)
    assert [(r.pattern, r.type.value) for r in config.policy.keys][:3] == [
        ("a.*", "string"),
        ("b.*", "string"),
        ("decision.*", "string"),
    ]


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("policy: {keys: [{pattern: 'caf\xe9.*'}]}\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin1\.yaml: not UTF-8 text"):
        load_config(path)


@pytest.mark.parametrize(
    ("ttl", "message"),
    [
        ("{default_sec: .inf}", "finite number"),
        ("{default_sec: 1.0e+12}", "less than or equal to"),
        ("{default_sec: 60, max_sec: 10}", "default_sec 60 is more than max_sec 10"),
    ],
)
def test_ttl_rules_are_finite_and_consistent(tmp_path: Path, ttl: str, message: str) -> None:
    [issue] = issues_of(tmp_path, f"policy:\n  keys:\n    - pattern: t.*\n      ttl: {ttl}\n")
    assert ":4: policy.keys[0].ttl" in issue and message in issue


def test_beats_may_only_surface_known_actions(tmp_path: Path) -> None:
    text = (
        "actions:\n"
        "  SwitchScene: {key: scene.name}\n"
        "  ConfirmCurrent: {key: decision.x}\n"
        "  lower: {key: decision.y}\n"
        "beats:\n"
        "  - id: B\n"
        "    when: 'true'\n"
        "    actions:\n"
        "      - {type: SwitchScene, label: Go}\n"
        "      - {type: LaunchMissiles, label: Fire}\n"
    )
    found = issues_of(tmp_path, text)
    path = tmp_path / "deliberate.yaml"
    assert f"{path}:3: actions.ConfirmCurrent: action name 'ConfirmCurrent' must be" in found[0]
    assert f"{path}:4: actions.lower: action name 'lower'" in found[1]
    assert f"{path}:10: beats[0].actions[1].type: unknown action 'LaunchMissiles'" in found[2]
    assert len(found) == 3


def test_action_keys_and_key_templates_must_make_state_keys(tmp_path: Path) -> None:
    text = (
        "deliberation:\n  decision_key: 'decision/$topic'\nactions:\n  Bad:\n    key: 'has space'\n"
    )
    found = issues_of(tmp_path, text)
    assert any(":2: deliberation.decision_key:" in f and "state key" in f for f in found)
    assert any(":5: actions.Bad.key:" in f for f in found)


def test_store_retention_and_replicas_are_checked_where_they_are_written(tmp_path: Path) -> None:
    text = (
        "store:\n  retention:\n    keep_days: 0\n    keep_records: -5\n"
        "    compact_every_sec: 1\n  replicas:\n    wait_for: 99\n  log_prev_max_bytes: -1\n"
    )
    issues = issues_of(tmp_path, text)
    where = [i.split(": ", 2)[0].split(":")[-1] + ":" + i.split(": ", 2)[1] for i in issues]
    assert sorted(where, key=lambda w: int(w.split(":")[0])) == [
        "3:store.retention.keep_days",
        "4:store.retention.keep_records",
        "5:store.retention.compact_every_sec",
        "7:store.replicas.wait_for",
        "8:store.log_prev_max_bytes",
    ]


def test_a_retry_budget_past_the_idempotency_window_is_refused_where_it_is_written(
    tmp_path: Path,
) -> None:
    text = "store:\n  idempotency_ttl_sec: 60\n  commit_retry_sec: 45\n"
    [issue] = issues_of(tmp_path, text)
    assert ":3: store.commit_retry_sec:" in issue and "idempotency_ttl_sec (60 s)" in issue
    path = tmp_path / "within.yaml"
    path.write_text("store:\n  idempotency_ttl_sec: 60\n  commit_retry_sec: 20\n")
    assert load_config(path).store.open(Redis(), "local").durability.retry_sec == 20


def test_store_settings_reach_the_store(tmp_path: Path) -> None:
    text = (
        "store:\n  retention:\n    keep_days: null\n    keep_records: 500\n"
        "  replicas: {wait_for: 1, timeout_ms: 250}\n  log_prev_max_bytes: 64\n"
    )
    path = tmp_path / "deliberate.yaml"
    path.write_text(text, encoding="utf-8")
    store_config = load_config(path).store
    assert store_config.retention.retention == Retention(None, 500)
    store = store_config.open(Redis(), "local")  # no connection is made until a command
    assert store.prev_max_bytes == 64
    assert store.durability == Durability(1, 250)
