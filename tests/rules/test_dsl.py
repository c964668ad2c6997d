"""Rule files: every mistake is named by file, line and field, and fails the load."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.app import load_app_config
from core.errors import ConfigError
from rules.dsl import seconds
from tests.conftest import write_config


def issues(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[str]:
    path = write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_app_config(path)
    return [str(issue) for issue in caught.value.issues]


RULE = """rules:
  - id: r1
    when: {key: "decision.*", op: set}
    then:
      - action: log.write
        args: {message: "{{ mutation.key }}"}
"""


def test_a_good_rule_file_loads(tmp_path: Path) -> None:
    config = load_app_config(write_config(tmp_path, RULE))
    *_, rule = config.rules  # after the shipped rules
    assert rule.when.key == "decision.*" and rule.then[0].action == "log.write"


@pytest.mark.parametrize(
    ("change", "line", "field", "message"),
    [
        ('"{{ mutation.key }}"', 6, "rules[0].then[0].args", "template does not compile"),
        ("log.write", 5, "rules[0].then[0].action", "unknown action 'obs.setScen'"),
        (
            "op: set",
            3,
            "rules[0].when.op[0]",
            "expected one of 'set', 'delete', 'append' or 'incr'",
        ),
        ('key: "decision.*"', 3, "rules[0].when.key", "characters no state key"),
    ],
)
def test_mistakes_are_located(
    tmp_path: Path, change: str, line: int, field: str, message: str
) -> None:
    broken = {
        '"{{ mutation.key }}"': '"{{ mutation.key "',
        "log.write": "obs.setScen",
        "op: set": "op: sett",
        'key: "decision.*"': 'key: "decision/*"',
    }[change]
    (issue,) = issues(tmp_path, RULE.replace(change, broken))
    assert issue.startswith(f"{tmp_path / 'deliberate.yaml'}:{line}: {field}:"), issue
    assert message in issue


def test_cel_that_does_not_compile(tmp_path: Path) -> None:
    text = RULE.replace("    then:", "    if: {expr: 'state[\"a\"] >'}\n    then:")
    (issue,) = issues(tmp_path, text)
    assert ":4: rules[0].if.expr: CEL does not compile" in issue


def test_a_step_is_an_action_or_a_mutation(tmp_path: Path) -> None:
    text = RULE.replace(
        "      - action: log.write\n",
        "      - action: log.write\n        mutate: {op: set, key: a, value: 1}\n",
    )
    (issue,) = issues(tmp_path, text)
    assert "rules[0].then[0]: a step has either action: or mutate:" in issue


def test_duplicate_ids_and_every_issue_at_once(tmp_path: Path) -> None:
    text = RULE + RULE.split("rules:\n")[1].replace("op: set", "op: nope")
    found = issues(tmp_path, text)
    assert any("rules[1].when.op" in i for i in found)
    text = RULE + RULE.split("rules:\n")[1]
    (dup,) = issues(tmp_path, text)
    assert ":7: rules[1].id: duplicate rule id r1" in dup


def test_for_and_signal_are_exclusive_and_durations_parse(tmp_path: Path) -> None:
    text = RULE.replace(
        "    then:", "    for: 5s\n    signal: {at_least: 2, within: 1m}\n    then:"
    )
    (issue,) = issues(tmp_path, text)
    assert "either for: or signal:" in issue
    assert seconds("500ms") == 0.5 and seconds("5m") == 300 and seconds(2) == 2.0
    with pytest.raises(ValueError, match="not a duration"):
        seconds("soon")
    (bad,) = issues(tmp_path, RULE.replace("    then:", "    for: soon\n    then:"))
    assert ":4: rules[0].for:" in bad


def test_env_refs_resolve_at_load_and_a_missing_one_is_located(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = RULE.replace('"{{ mutation.key }}"', '"${DELIB_TEST_MESSAGE}"')
    (issue,) = issues(tmp_path, text)
    assert ":6: rules[0].then[0].args.message: environment variable DELIB_TEST_MESSAGE" in issue
    monkeypatch.setenv("DELIB_TEST_MESSAGE", "hello there")
    config = load_app_config(write_config(tmp_path, text))
    assert config.rules[-1].then[0].args == {"message": "hello there"}
    mine = [(r.name, r.is_set) for r in config.env_refs if r.name.startswith("DELIB_TEST")]
    assert mine == [("DELIB_TEST_MESSAGE", True)]
    optional = RULE.replace('"{{ mutation.key }}"', '"${DELIB_TEST_UNSET:-}"')
    config = load_app_config(write_config(tmp_path, optional))
    assert config.rules[-1].then[0].args == {"message": ""}


def test_lowercase_dollar_names_are_left_for_their_templates(tmp_path: Path) -> None:
    text = "actions:\n  Pick:\n    op: set\n    key: scene.name\n    value: ${candidate}\n"
    config = load_app_config(write_config(tmp_path, text))
    assert config.actions["Pick"].value == "${candidate}"


def test_the_shipped_rules_load() -> None:
    ids = [rule.id for rule in load_app_config(None).rules]
    assert ids == [
        "announce_decision",
        "decision_webhook",
        "announce_break_glass",
        "switch_scene",
        "stream_off",
        "death_cam",
    ]
