"""pydantic's complaints in our words (``core.field_errors``), wherever a config loads or the
command line reads input: the file, the line, the field and what was expected there, never a
class name ("a valid dictionary or instance of When") nor the value found. A bad file
changes nothing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from redis import Redis

from bot.app import load_app_config
from core.errors import ConfigError
from core.field_errors import plain_problems
from rules.config import RulesConfig
from tests.bot.cli.process import run
from tests.conftest import write_config

RULE = """rules:
  - id: broken
    when: WHEN
    then:
      - action: log.write
        args: {message: hi}
"""


def issues(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        load_app_config(write_config(tmp_path, text, "rules.yaml"))
    return [str(issue) for issue in raised.value.issues]


@pytest.mark.parametrize(
    ("when", "said"),
    [
        ("[scene.name]", "expected a mapping (key:, op:, from:, to:), got a list"),
        ("scene.name", "expected a mapping (key:, op:, from:, to:), got text"),
        ("3", "expected a mapping (key:, op:, from:, to:), got a number"),
        ("", "expected a mapping (key:, op:, from:, to:), got nothing (null)"),
    ],
)
def test_a_malformed_when_says_what_was_expected_not_a_class_name(
    tmp_path: Path, when: str, said: str
) -> None:
    [issue] = issues(tmp_path, RULE.replace("WHEN", when))
    assert issue == f"{tmp_path / 'rules.yaml'}:3: rules[0].when: {said}"


def test_each_part_of_a_rule_says_the_fields_it_takes(tmp_path: Path) -> None:
    text = RULE.replace("WHEN", "{key: a, changed: true}").replace(
        "    then:\n",
        '    if: "state.x"\n    max: lots\n    mode: fast\n    then:\n      - mutate: [1]\n',
    )
    path = tmp_path / "rules.yaml"
    assert issues(tmp_path, text) == [
        f"{path}:3: rules[0].when.changed: is not a field here (expected one of key:, op:, "
        "from:, to:)",
        f"{path}:4: rules[0].if: expected a mapping (state:, expr:), got text",
        f"{path}:6: rules[0].mode: expected one of 'single', 'queued', 'parallel' or 'restart'",
        f"{path}:5: rules[0].max: expected a whole number, got text",
        f"{path}:8: rules[0].then[0].mutate: expected a mapping (op:, key:, value:, ttl_sec:), "
        "got a list",
    ]


def test_the_policy_and_the_other_sections_say_it_the_same_way(tmp_path: Path) -> None:
    text = (
        "policy:\n  keys:\n    - 3\n    - {pattern: 1}\n  proposals: {tell: yes please}\n"
        "automation: {retries: 2.5}\nstore: []\n"
    )
    path = tmp_path / "rules.yaml"
    assert issues(tmp_path, text) == [
        f"{path}:7: store: expected a mapping (idempotency_ttl_sec:, checkpoint_every:, "
        "log_prev_max_bytes:, retention:, replicas:, …), got a list",
        f"{path}:5: policy.proposals.tell: expected a mapping (thread:, dm:), got text",
        f"{path}:3: policy.keys[0]: expected a mapping (type:, enum:, max_length:, items:, "
        "pattern:, …), got a number",
        f"{path}:4: policy.keys[1].pattern: expected text, got a number",
        f"{path}:6: automation.retries: expected a whole number, got a number with a fraction",
    ]


def model_names(model: type[BaseModel], seen: set[str] | None = None) -> set[str]:
    """The names of ``model`` and of every model its fields hold, at any depth."""
    seen = set() if seen is None else seen
    if model.__name__ in seen:
        return seen
    seen.add(model.__name__)
    for field in model.model_fields.values():
        for inner in re.findall(r"[A-Za-z_][\w.]*", str(field.annotation)):
            found = _model_named(model, inner.rsplit(".", 1)[-1])
            if found is not None:
                model_names(found, seen)
    return seen


def _model_named(model: type[BaseModel], name: str) -> type[BaseModel] | None:
    for field in model.model_fields.values():
        for candidate in _types_in(field.annotation):
            if candidate.__name__ == name:
                return candidate
    return None


def _types_in(annotation: object) -> list[type[BaseModel]]:
    found = []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        found.append(annotation)
    for arg in getattr(annotation, "__args__", ()) or ():
        found.extend(_types_in(arg))
    return found


CLASS_NAMES = sorted(model_names(RulesConfig) - {"RulesConfig"})
PLACES = [
    ("rules", 0, "when"),
    ("rules", 0, "if"),
    ("rules", 0, "signal"),
    ("rules", 0, "then", 0),
    ("rules", 0, "then", 0, "mutate"),
    ("policy", "keys", 0),
    ("policy", "keys", 0, "approval"),
    ("policy", "proposals"),
    ("policy", "proposals", "tell"),
    ("automation",),
    ("store",),
    ("sessions",),
]
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["key", "x", "op", "pattern"]), inner, max_size=3)
    ),
    max_leaves=6,
)


def placed(place: tuple[str | int, ...], value: object) -> dict[str, Any]:
    """A config with a rule and a policy key, ``value`` put at ``place``."""
    data: dict[str, Any] = {
        "rules": [{"id": "r", "when": {"key": "a"}, "then": [{"action": "log.write"}]}],
        "policy": {"keys": [{"pattern": "a.*"}]},
    }
    holder: Any = data
    for part in place[:-1]:
        holder = holder.setdefault(part, {}) if isinstance(holder, dict) else holder[part]
    holder[place[-1]] = value
    return data


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(place=st.sampled_from(PLACES), value=JSONISH)
def test_no_problem_is_said_in_pydantics_words_or_quotes_the_value(
    tmp_path: Path, place: tuple[str | int, ...], value: object
) -> None:
    """Whatever a file puts wherever, each problem names its file, line and field, in our
    words: no model's class name, no "Input should", and not the text that was found."""
    path = write_config(tmp_path, yaml.safe_dump(placed(place, value)), "any.yaml")
    try:
        load_app_config(path)
    except ConfigError as exc:
        for issue in exc.issues:
            said = str(issue)
            assert issue.file == str(path) and issue.line is not None and issue.field, said
            assert "Input should" not in said and "instance of" not in said, said
            assert not re.search(rf"\b({'|'.join(CLASS_NAMES)})\b", issue.message), said


def test_the_class_names_checked_are_the_config_models() -> None:
    assert {"When", "Condition", "Step", "MutateSpec", "Rule", "KeyRule", "TellRule"} <= set(
        CLASS_NAMES
    )


def test_plain_words_leave_the_value_out() -> None:
    """A message says what kind of thing was found, never the thing (it may be a secret)."""
    from rules.dsl import When

    with pytest.raises(ValueError) as raised:
        When.model_validate(["sk-live-123456"])
    [(loc, said)] = plain_problems(raised.value, When)  # type: ignore[arg-type]
    assert (loc, said) == ((), "expected a mapping (key:, op:, from:, to:), got a list")


def test_a_bad_config_file_changes_nothing(
    capsys: pytest.CaptureFixture[str], workspace: str, tmp_path: Path, redis_client: Redis
) -> None:
    """``state set`` with a config whose rule is malformed: exit 2, the problem said in our
    words at its file and line, and nothing written."""
    path = write_config(tmp_path, RULE.replace("WHEN", "[scene.name]"), "rules.yaml")
    code, out, err = run(
        capsys,
        workspace,
        "--config",
        str(path),
        "state",
        "set",
        "decision.db",
        "pg",
        "--actor",
        "user:al",
    )
    assert (code, out) == (2, "")
    assert err == (
        "deliberate: configuration error:\n"
        f"{path}:3: rules[0].when: expected a mapping (key:, op:, from:, to:), got a list\n"
    )
    assert list(redis_client.scan_iter(f"*{workspace}*")) == []
