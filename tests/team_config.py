"""The shipped config as a team would run it on a chat platform: moderators (given as the
``roles:`` entries), an action writing a protected key straight from a button (EndStream:
``stream.state``, asking first) and one whose key is rate limited (Shout: once a minute)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from tests.conftest import write_config

__all__ = ["team_config"]

SHIPPED = files("core.config").joinpath("default.yaml").read_text(encoding="utf-8")
SHIPPED_ROLES = """\
  moderator:
    members: []
    groups: []
"""
SHIPPED_TENANTS = """\
tenants:
  discord:
    servers: []
    any_server: false
    direct_messages: false
  slack:
    teams: []
    any_team: false
"""
ACTIONS = """\

actions:
  EndStream: {op: set, key: stream.state, value: "off", confirm: true}
  Shout: {op: set, key: shout.last}
"""
POLICY_KEYS = """\
  keys:
    - pattern: "shout.*"
      type: string
      rate_limit: {max: 1, per_sec: 60}
"""


def team_config(tmp_path: Path, members: list[str], groups: list[str], tenants: str = "") -> Path:
    """``members`` and ``groups``: the top-level moderators (ids only); ``tenants``: the
    ``tenants:`` section, as YAML (a tenant's own role bindings go there)."""
    roles = f"  moderator:\n    members: {members}\n    groups: {groups}\n".replace("'", '"')
    text = SHIPPED
    if tenants:
        text = text.replace(SHIPPED_TENANTS, f"tenants:\n{tenants}")
    for old, new in ((SHIPPED_ROLES, roles), ("\nactions:\n", ACTIONS), ("  keys:\n", POLICY_KEYS)):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return write_config(tmp_path, text)
