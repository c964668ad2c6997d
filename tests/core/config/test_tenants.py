"""Tenants in the config: which servers and teams are served, in which workspace, with which
bindings; names and permissions bound in one server never count in another."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.config.core_config import load_config
from core.config.roles import Membership, RoleBinding, roles_for
from core.config.tenants import Tenancy, TenantsConfig
from core.errors import ConfigError
from tests.conftest import write_config

OURS, THEIRS = "130000000000000001", "130000000000000099"
ROLE_ID = "130000000000000020"

CONFIG = f"""
roles:
  moderator:
    members: ["discord:140000000000000001", "slack:U0SAM"]
    groups: ["discord:{ROLE_ID}", "slack:S0MODS"]
tenants:
  discord:
    servers:
      - id: "{OURS}"
        workspace: stream-team
        roles:
          moderator: {{groups: ["discord:Moderators", "discord:permission:manage_guild"]}}
        members: talk
  slack:
    teams:
      - T0TEAM
      - id: E0ORG
        roles:
          admin: {{groups: ["slack:admins"]}}
"""


def config_with(discord: str = "", slack: str = "") -> str:
    """CONFIG with more settings under tenants.discord and tenants.slack."""
    text = CONFIG.replace("        members: talk\n", f"        members: talk\n{discord}")
    return text + slack


def tenancy(tmp_path: Path, text: str = CONFIG) -> Tenancy:
    config = load_config(write_config(tmp_path, text))
    return Tenancy(config.tenants, config.roles)


def issues_of(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(tmp_path, text))
    return [str(issue) for issue in caught.value.issues]


def test_listed_tenants_resolve_to_their_workspaces(tmp_path: Path) -> None:
    t = tenancy(tmp_path)
    ours = t.discord_server(int(OURS))
    assert ours is not None and ours.workspace == "stream-team" and ours.configured
    assert ours.talk_only and not ours.private
    team = t.slack_team("T0TEAM")
    assert team is not None and team.workspace == "slack-T0TEAM"
    # every team of a listed org is the org: one workspace
    for member_team in ("T0A", "T0B"):
        org = t.slack_team(member_team, "E0ORG")
        assert org is not None and org.workspace == "slack-E0ORG" and org.is_org
    assert [x.workspace for x in t.configured()] == ["stream-team", "slack-T0TEAM", "slack-E0ORG"]


def test_nothing_else_is_served_by_default(tmp_path: Path) -> None:
    t = tenancy(tmp_path)
    assert t.discord_server(THEIRS) is None
    assert t.discord_dm("140000000000000001") is None
    assert t.slack_team("T0OTHER") is None and t.slack_team(None) is None
    assert t.slack_team("T0OTHER", "E0OTHER", org_install=True) is None


def test_any_server_and_any_team_serve_each_on_its_own(tmp_path: Path) -> None:
    t = tenancy(tmp_path, config_with("    any_server: true\n", "    any_team: true\n"))
    theirs = t.discord_server(THEIRS)
    assert theirs is not None and theirs.workspace == f"discord-{THEIRS}"
    assert not theirs.configured  # no rules there
    assert t.slack_team("T0NEW").workspace == "slack-T0NEW"  # type: ignore[union-attr]
    installed_org_wide = t.slack_team("T0X", "E0NEW", org_install=True)
    assert installed_org_wide is not None and installed_org_wide.workspace == "slack-E0NEW"
    assert t.discord_server("not-a-guild") is None  # ids are checked, not trusted


def test_a_single_team_token_serves_its_team_in_the_given_workspace(tmp_path: Path) -> None:
    t = tenancy(tmp_path)
    t.serve_slack_team("T0MINE", workspace="local")
    mine = t.slack_team("T0MINE")
    assert mine is not None and mine.workspace == "local" and mine.configured
    t.serve_slack_team("T0TEAM", workspace="local")  # listed: the listing wins
    assert t.slack_team("T0TEAM").workspace == "slack-T0TEAM"  # type: ignore[union-attr]


def test_a_dm_is_private_with_no_binding_at_all(tmp_path: Path) -> None:
    dm = tenancy(tmp_path, config_with("    direct_messages: true\n")).discord_dm(
        140000000000000001
    )
    assert dm is not None and dm.private and not dm.configured
    assert dm.workspace == "discord-dm-140000000000000001" and dict(dm.bindings) == {}


def test_names_and_permissions_count_only_in_their_own_server(tmp_path: Path) -> None:
    t = tenancy(tmp_path, config_with("    any_server: true\n"))
    ours, theirs = t.discord_server(OURS), t.discord_server(THEIRS)
    assert ours is not None and theirs is not None
    named = Membership("discord", "1", frozenset(), frozenset({"Moderators"}))
    owner = Membership("discord", "2", frozenset(), frozenset({"permission:manage_guild"}))
    by_id = Membership("discord", "3", frozenset({ROLE_ID}), frozenset())
    assert roles_for(ours.bindings, named) == ("moderator",)
    assert roles_for(ours.bindings, owner) == ("moderator",)
    assert roles_for(ours.bindings, by_id) == ("moderator",)
    assert roles_for(theirs.bindings, named) == ()
    assert roles_for(theirs.bindings, owner) == ()
    assert roles_for(theirs.bindings, by_id) == ("moderator",)  # an id is an id anywhere


def test_a_name_at_the_top_level_is_refused_with_its_line(tmp_path: Path) -> None:
    text = 'roles:\n  moderator:\n    groups: ["discord:Moderators", "slack:mods", "slack:S0OK"]\n'
    issues = issues_of(tmp_path, text)
    assert len(issues) == 2
    assert ":3: roles.moderator.groups[0]:" in issues[0] and "'discord:Moderators'" in issues[0]
    assert "is a name, not an id" in issues[0] and "tenants.discord.servers" in issues[0]
    assert "roles.moderator.groups[1]" in issues[1]


@pytest.mark.parametrize(
    ("tenants", "message"),
    [
        ("  discord:\n    servers: [general]\n", "is not a Discord server id"),
        ("  slack:\n    teams: [C0CHANNEL]\n", "is not a Slack team"),
        ("  slack:\n    teams: [{id: T0A, workspace: 'a b'}]\n", "workspace 'a b' must be"),
        (
            "  slack:\n    teams: [{id: T0A, workspace: w}, {id: T0B, workspace: w}]\n",
            "share workspace 'w'",
        ),
        ("  discord:\n    servers: [{id: '130000000000000001', members: lurk}]\n", "members"),
        ("  slack:\n    teams: [T0A, {id: T0A, workspace: w}]\n", "T0A is listed twice"),
        ("  slack:\n    teams: [{id: T0A, workspace: slack-T0B}]\n", "choose another"),
        ("  slack:\n    teams: [{id: T0A, workspace: discord-dm-1}]\n", "choose another"),
        (
            "  discord:\n    servers: [{id: '130000000000000001', roles: "
            "{moderator: {groups: ['slack:mods']}}}]\n",
            "must start with discord:",
        ),
    ],
)
def test_a_bad_tenant_is_named(tmp_path: Path, tenants: str, message: str) -> None:
    [issue] = issues_of(tmp_path, f"tenants:\n{tenants}")
    assert message in issue and "tenants." in issue


def test_a_role_bound_only_inside_a_tenant_may_be_a_writer(tmp_path: Path) -> None:
    text = CONFIG + "policy:\n  keys:\n    - pattern: a.*\n      writers: [admin]\n"
    assert load_config(write_config(tmp_path, text)).policy.keys[0].writers == ["admin"]


# --- properties ------------------------------------------------------------------------

snowflakes = st.integers(10**16, 10**19).map(str)
names = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=20)


@given(server=snowflakes, other=snowflakes, role_names=st.sets(names, max_size=4), uid=snowflakes)
def test_no_name_or_permission_ever_crosses_servers(
    server: str, other: str, role_names: set[str], uid: str
) -> None:
    """Whatever a member of another server holds by name or permission, there it gives no
    role bound by name in our server."""
    bound = {"moderator": RoleBinding(groups=[f"discord:{n}" for n in role_names])}
    config = TenantsConfig.model_validate(
        {"discord": {"servers": [{"id": server, "roles": bound}], "any_server": True}}
    )
    t = Tenancy(config, {})
    theirs = t.discord_server(other)
    if other == server or theirs is None:
        return
    held = frozenset(role_names | {f"permission:{p}" for p in ("administrator", "manage_guild")})
    assert roles_for(theirs.bindings, Membership("discord", uid, held, held)) == ()


def test_an_unquoted_server_id_is_the_same_id(tmp_path: Path) -> None:
    t = tenancy(tmp_path, "tenants:\n  discord:\n    servers: [130000000000000001]\n")
    assert t.discord_server("130000000000000001") is not None


def test_a_misspelt_platform_at_the_top_level_is_named(tmp_path: Path) -> None:
    [issue] = issues_of(
        tmp_path, 'roles:\n  moderator:\n    members: ["Discord:140000000000000001"]\n'
    )
    assert "roles.moderator.members[0]" in issue and "must start with discord:" in issue
