"""A Slack Web API server and the bot in HTTP mode, per test, on the real Redis. Moderators:
U0SAM by user id, anyone in the ``mods`` user group (U0MIA) by handle."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from tests.bot.slack.oauth_rig import new_client_id
from tests.bot.slack.rig import CHANNEL, TEAM, SlackBot
from tests.servers.slack_api import SlackServer
from tests.team_config import team_config


def team_tenants(workspace: str, more: str = "") -> str:
    """The ``tenants:`` section: TEAM is served in ``workspace``, where the ``mods`` user
    group makes moderators (by handle: in TEAM alone)."""
    return f"""\
  slack:
    teams:
      - id: {TEAM}
        workspace: {workspace}
        roles:
          moderator: {{groups: ["slack:mods"]}}
{more}"""


def config_with_roles(tmp_path: Path, workspace: str) -> Path:
    """Moderators: U0SAM by user id, the ``mods`` user group by handle (in TEAM)."""
    return team_config(tmp_path, ["slack:U0SAM"], [], team_tenants(workspace))


@pytest.fixture
def team_app(redis_client: Redis, workspace: str, tmp_path: Path) -> App:
    return build_app(workspace, config_with_roles(tmp_path, workspace), client=redis_client)


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


@pytest.fixture
def slack() -> Iterator[SlackServer]:
    """A Slack server for an app that teams install (its own client id: its own keys)."""
    with SlackServer(client_id=new_client_id()) as server:
        yield server
