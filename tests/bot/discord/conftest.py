"""A Discord REST API and the bot logged in against it, per test, on the real Redis.
Moderators: the Moderators role by name, the Stage crew role by id, and anyone holding
manage_guild (see ``payloads``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from tests.bot.discord.payloads import CREW, GUILD
from tests.bot.discord.rig import DiscordBot
from tests.servers.discord_api import DiscordServer
from tests.team_config import team_config


def server_tenants(workspace: str, more: str = "") -> str:
    """The ``tenants:`` section: GUILD is served in ``workspace``, where the Moderators role
    and manage_guild make moderators (by name and permission: in GUILD alone)."""
    return f"""\
  discord:
    servers:
      - id: "{GUILD}"
        workspace: {workspace}
        roles:
          moderator: {{groups: ["discord:Moderators", "discord:permission:manage_guild"]}}
{more}"""


@pytest.fixture
def team_app(redis_client: Redis, workspace: str, tmp_path: Path) -> App:
    path = team_config(tmp_path, [], [f"discord:{CREW}"], server_tenants(workspace))
    return build_app(workspace, path, client=redis_client)


@pytest.fixture
def discord_api() -> Iterator[DiscordServer]:
    with DiscordServer() as server:
        yield server


@pytest.fixture
def bot(team_app: App, discord_api: DiscordServer) -> Iterator[DiscordBot]:
    running = DiscordBot(team_app, discord_api)
    yield running
    running.close()
