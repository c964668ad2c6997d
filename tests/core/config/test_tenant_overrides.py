"""A listed tenant's own sections (policy, beats, rules, actions) hold in its workspace alone,
merged over the whole config as a file is; an error in one names its file, line and field
as that file spells it. Through the app: the gateway of a tenant's workspace applies its
policy (real Redis)."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis import Redis

from bot.app import build_app, load_app_config
from core.config.core_config import load_config
from core.errors import ConfigError
from core.gateway.outcome import Pending
from core.state.commit_result import Committed
from rules.config import RulesConfig
from tests.conftest import delete_workspace, write_config
from tests.factories import mutation

TEAM, OTHER = "T0123ABCD", "T0999ZZZZ"
CONFIG = f"""
tenants:
  slack:
    teams:
      - id: {TEAM}
        roles: {{moderator: {{members: [slack:U0SARA]}}}}
        policy:
          keys:
            - pattern: "decision.*"
              type: string
              approval: {{people: true, quorum: 2}}
        rules:
          - id: announce
            when: {{key: "decision.*", op: set}}
            then:
              - action: log.write
                args: {{message: "decided {{{{ mutation.value }}}}"}}
        beats:
          - id: Nudge
            when: has(state.candidate)
            priority: 10
            actions: [{{type: ConfirmCurrent, label: Do it}}]
      - id: {OTHER}
        roles: {{moderator: {{members: [slack:U0MAX]}}}}
"""


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    return write_config(tmp_path, CONFIG)


def test_a_tenant_section_holds_in_its_workspace_alone(config_file: Path) -> None:
    config = load_config(config_file, RulesConfig)
    team = config.for_workspace(f"slack-{TEAM}")
    assert team is not config
    first = team.policy.keys[0]
    assert (first.pattern, first.approval.people, first.approval.quorum) == ("decision.*", True, 2)
    assert not config.policy.keys[0].approval.people  # the shipped decision.* elsewhere
    ids = [rule.id for rule in team.rules]
    assert "announce" in ids and len(ids) == len(config.rules) + 1  # the shipped ones stay
    assert "announce" not in [rule.id for rule in config.rules]
    assert [b.id for b in team.beats][-1] == "Nudge" and "Nudge" not in [b.id for b in config.beats]
    # a tenant that writes no section of its own, and any other workspace: the whole config
    assert config.for_workspace(f"slack-{OTHER}") is config
    assert config.for_workspace("local") is config
    # and from the tenant's config, another workspace is the whole config's again
    assert team.for_workspace("local") is config and team.for_workspace(f"slack-{TEAM}") is team


def test_a_named_workspace_takes_its_tenants_sections(tmp_path: Path) -> None:
    text = CONFIG.replace(f"- id: {TEAM}\n", f"- id: {TEAM}\n        workspace: acme\n")
    config = load_config(write_config(tmp_path, text), RulesConfig)
    assert config.for_workspace("acme").policy.keys[0].approval.quorum == 2
    assert config.for_workspace(f"slack-{TEAM}") is config


def test_an_error_in_a_tenant_section_names_the_file_line_and_field(tmp_path: Path) -> None:
    text = CONFIG.replace("              type: string\n", "              type: strnig\n", 1)
    path = write_config(tmp_path, text)
    with pytest.raises(ConfigError) as raised:
        load_config(path, RulesConfig)
    said = str(raised.value)
    assert f"{path}:10: tenants.slack.teams[0].policy.keys[0].type" in said, said


def test_a_tenant_rule_is_checked_as_any_rule(tmp_path: Path) -> None:
    text = CONFIG.replace("mutation.value", "mutaton.value")
    with pytest.raises(ConfigError) as raised:
        load_app_config(write_config(tmp_path, text))
    assert "mutaton" in str(raised.value) and "tenants.slack.teams[0].rules[" in str(raised.value)


def test_the_gateway_of_a_tenants_workspace_applies_its_policy(
    config_file: Path, server_redis: Redis, workspace: str
) -> None:
    app = build_app(workspace, config_file, client=server_redis)
    team = app.for_workspace(f"slack-{TEAM}")
    try:
        here = app.gateway.propose(mutation("set", "decision.db", "postgres", "user:al"))
        there = team.gateway.propose(mutation("set", "decision.db", "postgres", "user:al"))
        assert isinstance(here, Committed), here
        assert isinstance(there, Pending) and there.proposal.quorum == 2, there
        assert team.store.get("decision.db") is None  # nothing committed there
        assert "announce" in {rule.id for rule in team.rules.rules}
        assert "announce" not in {rule.id for rule in app.rules.rules}
        # the tenant's own workspace as the first one (deliberate --workspace slack-T…)
        direct = build_app(f"slack-{TEAM}", config_file, client=server_redis)
        assert direct.config.policy.keys[0].approval.quorum == 2
        assert direct.for_workspace(workspace).config.policy.keys[0].approval.quorum == 1
    finally:
        delete_workspace(server_redis, f"slack-{TEAM}")
