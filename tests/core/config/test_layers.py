"""Configuration in layers: the shipped defaults, then each file, merged by the rule of its
section (``core/config/layers.py``); errors and origins name the file that wrote a value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.app import load_app_config
from bot.cli.config import render
from core.config.core_config import config_paths, load_config
from core.config.layers import Layer, Node, merge
from core.errors import ConfigError
from core.gateway.policy import Policy
from tests.conftest import write_config

ONE_RULE = """\
rules:
  - id: tell_the_team
    when: {key: "decision.*", op: set}
    then:
      - action: http.post
        args: {url: "http://127.0.0.1:9/hook", json: {}}
"""
SHIPPED_RULES = [
    *("announce_decision", "decision_webhook", "announce_break_glass"),
    *("switch_scene", "stream_off", "death_cam"),
]


def issues(paths: list[Path]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_app_config(paths)
    return [str(issue) for issue in caught.value.issues]


def test_a_file_of_one_rule_adds_it_and_keeps_everything_shipped(tmp_path: Path) -> None:
    config = load_app_config([write_config(tmp_path, ONE_RULE)])
    assert [rule.id for rule in config.rules] == [*SHIPPED_RULES, "tell_the_team"]
    # the shipped policy still holds: the keys it allows are allowed
    assert Policy(config.policy).rule_for("decision.db") is not None
    assert len(config.beats) == len(load_config().beats)


def test_an_entry_of_the_same_id_replaces_it_where_it_stands(tmp_path: Path) -> None:
    text = ONE_RULE.replace("tell_the_team", "switch_scene")
    config = load_app_config([write_config(tmp_path, text)])
    assert [rule.id for rule in config.rules] == SHIPPED_RULES
    assert config.rules[SHIPPED_RULES.index("switch_scene")].then[0].action == "http.post"


def test_replace_drops_what_came_before(tmp_path: Path) -> None:
    text = ONE_RULE.replace("rules:\n", "rules: !replace\n") + "beats: !replace []\n"
    config = load_app_config([write_config(tmp_path, text)])
    assert [rule.id for rule in config.rules] == ["tell_the_team"]
    assert config.beats == []
    [issue] = issues([write_config(tmp_path, "perception:\n  min_confidence: !replace 0.3\n")])
    assert issue.startswith(f"{tmp_path / 'deliberate.yaml'}:2:")
    assert "!replace goes before a mapping or a list" in issue


def test_a_new_key_pattern_comes_first_so_it_wins_over_a_shipped_one(tmp_path: Path) -> None:
    text = 'policy:\n  keys:\n    - {pattern: "decision.secret-*", secret: true, type: string}\n'
    policy = Policy(load_config(write_config(tmp_path, text)).policy)
    rule = policy.rule_for("decision.secret-pin")
    assert rule is not None and rule.secret
    shipped = policy.rule_for("decision.db")
    assert shipped is not None and shipped.pattern == "decision.*"


def test_a_file_s_own_key_patterns_decide_in_the_order_it_writes_them(tmp_path: Path) -> None:
    # a copy of the shipped file with a protected scene.name put before the shipped entry:
    # in that file alone the first one decides, and so it does on top of the shipped file
    shipped = (Path(load_config.__code__.co_filename).parent / "default.yaml").read_text("utf-8")
    first = "  keys:\n    - {pattern: scene.name, type: string, protected: true}\n"
    assert shipped.count("  keys:\n") == 1
    copy = write_config(tmp_path, shipped.replace("  keys:\n", first), "copy.yaml")
    rule = Policy(load_config(copy).policy).rule_for("scene.name")
    assert rule is not None and rule.protected
    # a known pattern, then a wider new one: the known one still decides its own keys
    text = (
        "policy:\n  keys:\n"
        "    - {pattern: stream.state, type: string, protected: false}\n"
        '    - {pattern: "stream.*", type: string, protected: true}\n'
    )
    policy = Policy(load_config(write_config(tmp_path, text)).policy)
    state, other = policy.rule_for("stream.state"), policy.rule_for("stream.other")
    assert state is not None and state.pattern == "stream.state" and not state.protected
    assert other is not None and other.pattern == "stream.*" and other.protected
    assert [key.pattern for key in policy.config.keys].count("stream.state") == 1


def test_an_id_a_file_gives_twice_is_reported_as_in_that_file_alone(tmp_path: Path) -> None:
    text = ONE_RULE.replace("tell_the_team", "switch_scene") + ONE_RULE.replace(
        "rules:\n", ""
    ).replace("tell_the_team", "switch_scene")
    found = issues([write_config(tmp_path, text)])
    assert any("duplicate rule id switch_scene" in issue for issue in found), found


def test_maps_merge_other_lists_replace_and_role_members_extend(tmp_path: Path) -> None:
    first = write_config(
        tmp_path,
        "automation: {backoff_sec: [2, 4]}\nroles: {moderator: {members: [slack:U1]}}\n",
        "first.yaml",
    )
    second = write_config(
        tmp_path,
        "automation: {retries: 1}\nroles: {moderator: {members: [slack:U2, slack:U1]}}\n",
        "second.yaml",
    )
    config = load_app_config([first, second])
    assert config.automation.backoff_sec == [2, 4]  # the later file did not name it
    assert config.automation.retries == 1
    assert config.automation.queue == "deliberate"  # shipped
    assert config.roles["moderator"].members == ["slack:U1", "slack:U2"]
    third = write_config(tmp_path, "automation: {backoff_sec: [9]}\n", "third.yaml")
    assert load_app_config([first, third]).automation.backoff_sec == [9]


def test_includes_merge_first_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "team").mkdir()
    write_config(tmp_path / "team", "perception: {min_confidence: 0.6}\n", "base.yaml")
    write_config(tmp_path / "team", ONE_RULE, "rules.yaml")
    top = write_config(
        tmp_path, "include: [team/base.yaml, team/rules.yaml]\nperception: {min_confidence: 0.7}\n"
    )
    config = load_app_config([top])
    assert config.perception.min_confidence == 0.7  # the file itself comes after its includes
    assert config.rules[-1].id == "tell_the_team"
    assert config.located is not None
    assert config.located.origin_of(("rules", 6, "id")) == (str(tmp_path / "team/rules.yaml"), 2)


def test_an_include_that_cannot_be_read_or_loops_names_the_line(tmp_path: Path) -> None:
    top = write_config(tmp_path, "version: 1\ninclude: [nowhere.yaml]\n")
    [issue] = issues([top])
    assert issue.startswith(f"{top}:2: include[0]: ")
    assert "nowhere.yaml: cannot read" in issue
    write_config(tmp_path, "include: [a.yaml]\n", "b.yaml")
    loop = write_config(tmp_path, "include:\n  - b.yaml\n", "a.yaml")
    [issue] = issues([loop])
    assert issue.startswith(f"{tmp_path / 'b.yaml'}:1: include[0]: includes itself: ")
    [issue] = issues([write_config(tmp_path, "include: [a.yaml]\n", "c.yaml")])
    chain = " -> ".join(str(tmp_path / name) for name in ("c.yaml", "a.yaml", "b.yaml", "a.yaml"))
    assert issue == f"{tmp_path / 'b.yaml'}:1: include[0]: includes itself: {chain}"
    [issue] = issues([write_config(tmp_path, "include: {a: 1}\n", "d.yaml")])
    assert issue == f"{tmp_path / 'd.yaml'}:1: include: a list of file paths to merge first"


def test_an_error_names_the_file_line_and_field_as_that_file_writes_them(tmp_path: Path) -> None:
    good = write_config(tmp_path, ONE_RULE, "good.yaml")
    bad = write_config(tmp_path, "rules:\n  - id: broken\n    when: {key: 3}\n", "bad.yaml")
    found = issues([good, bad])
    assert f"{bad}:3: rules[0].when.key: expected text, got a number" in found
    assert f"{bad}:2: rules[0].then: is required, and missing" in found
    # a cross-section check, on a value one file wrote and a name another defines
    typo = write_config(
        tmp_path, 'policy:\n  keys:\n    - {pattern: "x.*", writers: [moderatr]}\n', "typo.yaml"
    )
    [issue] = issues([good, typo])
    assert issue.startswith(f"{typo}:3: policy.keys[0].writers[0]: unknown role 'moderatr'")


def test_deliberate_config_lists_several_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DELIBERATE_CONFIG", f"{tmp_path / 'a.yaml'}:{tmp_path / 'b.yaml'}")
    assert config_paths(None) == [tmp_path / "a.yaml", tmp_path / "b.yaml"]
    assert config_paths([tmp_path / "c.yaml"]) == [tmp_path / "c.yaml"]
    monkeypatch.setenv("DELIBERATE_CONFIG", "")
    assert config_paths(None) == []


def test_config_show_prints_the_merged_data_and_where_each_value_came_from(
    tmp_path: Path,
) -> None:
    mine = write_config(tmp_path, ONE_RULE + "perception:\n  min_confidence: 0.55\n")
    config = load_app_config([mine])
    assert config.located is not None
    plain = render(config.located)
    assert yaml.safe_load("\n".join(plain)) == config.located.data
    lines = render(config.located, origin=True)
    assert yaml.safe_load("\n".join(lines)) == config.located.data  # comments only
    assert f"  min_confidence: 0.55  # {mine}:8" in lines
    assert f"  - id: tell_the_team  # {mine}:2" in lines
    shipped = next(line for line in lines if line.startswith("  - id: announce_decision"))
    default = Path(load_config.__code__.co_filename).parent / "default.yaml"
    written = default.read_text(encoding="utf-8").splitlines().index("  - id: announce_decision")
    assert shipped.endswith(f"core/config/default.yaml:{written + 1}")


# --- the merge itself, on any nesting of mappings ------------------------------------------

keys = st.sampled_from(["a", "b", "c"])
trees: st.SearchStrategy[Any] = st.recursive(
    st.integers(0, 9) | st.text("xyz", max_size=2),
    lambda inner: st.dictionaries(keys, inner, max_size=3),
    max_leaves=12,
)


def layer(data: Any, name: str) -> Layer:
    def paths(value: Any, path: tuple[str | int, ...]) -> list[tuple[str | int, ...]]:
        found = [path]
        if isinstance(value, dict):
            for key, item in value.items():
                found += paths(item, (*path, key))
        return found

    origins = {path: (name, n + 1) for n, path in enumerate(paths(data, ()))}
    return Layer(Node.of(data, origins, set()))


def deep_update(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for key, value in over.items():
            out[key] = deep_update(out[key], value) if key in out else value
        return out
    return over


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(keys, trees, max_size=3), st.dictionaries(keys, trees, max_size=3))
def test_mappings_merge_key_by_key_and_each_value_keeps_its_file(
    base: dict[str, Any], over: dict[str, Any]
) -> None:
    merged = merge(layer(base, "base"), layer(over, "over"))
    assert merged.data == deep_update(base, over)

    def written_by_over(path: tuple[str | int, ...]) -> bool:
        value: Any = over
        for part in path:
            if not isinstance(value, dict) or part not in value:
                return False
            value = value[part]
        return True

    for path, (name, _) in merged.origins.items():
        if path and not isinstance(merged.root.value, list):
            assert name == ("over" if written_by_over(path) else "base"), path


TEAM_IN_FULL = """\
tenants:
  slack:
    teams:
      - id: T0123ABCD
        roles: {moderator: {members: ["slack:U0SARA"]}}
        policy:
          keys:
            - pattern: "decision.*"
              type: string
              approval: {people: true, quorum: 2}
"""


def test_a_tenant_listed_again_by_its_id_keeps_its_roles_and_its_own_sections(
    tmp_path: Path,
) -> None:
    """Adding a team to the listing in a later file, the others by id alone, is how people
    list one more: the team written in full before must keep its moderators and its stricter
    approval (a replaced entry dropped both, silently)."""
    base = write_config(tmp_path, TEAM_IN_FULL, "base.yaml")
    more = write_config(tmp_path, "tenants:\n  slack:\n    teams: [T0123ABCD, T0999ZZZZ]\n")
    config = load_app_config([base, more])
    team, other = config.tenants.slack.teams
    assert (team.id, other.id) == ("T0123ABCD", "T0999ZZZZ")
    assert team.roles["moderator"].members == ["slack:U0SARA"]
    own = config.for_workspace("slack-T0123ABCD").policy.keys[0]
    assert (own.pattern, own.approval.people, own.approval.quorum) == ("decision.*", True, 2)


def test_a_later_entry_of_a_tenant_merges_into_it(tmp_path: Path) -> None:
    base = write_config(tmp_path, TEAM_IN_FULL, "base.yaml")
    more = write_config(
        tmp_path, "tenants:\n  slack:\n    teams:\n      - {id: T0123ABCD, members: talk}\n"
    )
    [team] = load_app_config([base, more]).tenants.slack.teams
    assert team.members == "talk" and team.roles["moderator"].members == ["slack:U0SARA"]


def test_a_later_entry_of_a_key_pattern_merges_into_it_and_keeps_its_secrecy(
    tmp_path: Path,
) -> None:
    """An entry for a pattern already there adds to it: an approval added to a secret key
    must not make it plain (a replaced entry dropped ``secret: true``); ``!replace`` writes
    the entry afresh."""
    base = write_config(
        tmp_path,
        'policy:\n  keys:\n    - pattern: "token.*"\n      secret: true\n      type: string\n',
        "base.yaml",
    )
    more = write_config(
        tmp_path, 'policy:\n  keys:\n    - pattern: "token.*"\n      approval: {quorum: 2}\n'
    )
    first = load_app_config([base, more]).policy.keys[0]
    assert (first.pattern, first.secret, first.type, first.approval.quorum) == (
        "token.*",
        True,
        "string",
        2,
    )
    fresh = write_config(
        tmp_path,
        'policy:\n  keys:\n    - !replace {pattern: "token.*", approval: {quorum: 2}}\n',
        "fresh.yaml",
    )
    first = load_app_config([base, fresh]).policy.keys[0]
    assert (first.pattern, first.secret, first.approval.quorum) == ("token.*", False, 2)
