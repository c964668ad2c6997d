"""A Slack Web API server and the bot in HTTP mode, per test, on the real Redis. Moderators:
U0SAM by user id, anyone in the ``mods`` user group (U0MIA) by handle."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from tests.conftest import write_config
from tests.servers.slack_api import SlackServer
from tests.slack.rig import CHANNEL, SlackBot

SHIPPED = files("core").joinpath("default.yaml").read_text(encoding="utf-8")
SHIPPED_ROLES = """\
  moderator:
    members: []
    groups: []
"""
ROLES = """\
  moderator:
    members: [slack:U0SAM]
    groups: [slack:mods]
"""


# a protected key written straight by a button, and a key with a tight rate limit
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


def config_with_roles(tmp_path: Path) -> Path:
    """The shipped config with moderators, and the actions and key above."""
    text = SHIPPED
    for old, new in ((SHIPPED_ROLES, ROLES), ("\nactions:\n", ACTIONS), ("  keys:\n", POLICY_KEYS)):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return write_config(tmp_path, text)


@pytest.fixture
def team_app(redis_client: Redis, workspace: str, tmp_path: Path) -> App:
    return build_app(workspace, config_with_roles(tmp_path), client=redis_client)


@pytest.fixture
def slack_api() -> Iterator[SlackServer]:
    groups = [{"id": "S0MODS", "handle": "mods", "users": ["U0MIA"]}]
    with SlackServer(channels={CHANNEL}, usergroups=groups) as server:
        yield server


@pytest.fixture
def bot(team_app: App, slack_api: SlackServer) -> Iterator[SlackBot]:
    running = SlackBot(team_app, slack_api).start()
    yield running
    running.stop()
