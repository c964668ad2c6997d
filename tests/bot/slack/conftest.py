"""A Slack Web API server and the bot in HTTP mode, per test, on the real Redis. Moderators:
U0SAM by user id, anyone in the ``mods`` user group (U0MIA) by handle."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from tests.bot.slack.rig import CHANNEL, SlackBot
from tests.servers.slack_api import SlackServer
from tests.team_config import team_config


def config_with_roles(tmp_path: Path) -> Path:
    """Moderators: U0SAM by user id, the ``mods`` user group by handle."""
    return team_config(tmp_path, ["slack:U0SAM"], ["slack:mods"])


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
