"""The web inspector served for a test: the shipped config with one Slack team (``TEAM``)
served in the test's workspace, where ``MOD`` is a moderator, and ``scene.name`` protected
(only a moderator applies the model's proposal of it); waitress on a free port; the operator
token ``OPERATOR_TOKEN``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from flask import Flask

from bot.app import App, build_app
from bot.web.settings import WebSettings
from bot.web.site import create_app
from core.redis.client import RedisClient
from tests.round_trips import Trips, counting_copy
from tests.servers.wsgi import ServedWsgi
from tests.team_config import team_config

TEAM = "T0WEB0001"
MOD = "U0MOD"
PERSON = "U0ANN"
OPERATOR_TOKEN = "operator-token-for-tests-0123456789"
PROTECTED_SCENE = """\
  keys:
    - pattern: scene.name
      description: The OBS scene a rule switches to
      type: string
      enum: [Starting, Live, BRB, Ending, Death cam]
      protected: true
"""


def web_tenants(workspace: str) -> str:
    return f"""\
  slack:
    teams:
      - id: {TEAM}
        workspace: {workspace}
        roles:
          moderator: {{members: ["slack:{MOD}"]}}
"""


def web_config(tmp_path: Path, workspace: str) -> Path:
    path = team_config(tmp_path, [], [], web_tenants(workspace))
    text = path.read_text(encoding="utf-8")
    assert text.count("  keys:\n") == 1
    path.write_text(text.replace("  keys:\n", PROTECTED_SCENE, 1), encoding="utf-8")
    return path


@dataclass
class Site:
    app: App
    flask: Flask
    served: ServedWsgi

    @property
    def base(self) -> str:
        return self.served.base


def serve_site(
    app: App, settings: WebSettings | None = None, env: dict[str, str] | None = None
) -> Site:
    settings = settings or WebSettings(operator_token=OPERATOR_TOKEN)
    flask = create_app(app, settings, env=env or {})
    return Site(app, flask, ServedWsgi(flask).start())


@pytest.fixture
def web_app(tmp_path: Path, redis_client: RedisClient, workspace: str) -> App:
    return build_app(workspace, web_config(tmp_path, workspace), client=redis_client)


@pytest.fixture
def counted(
    tmp_path: Path, workspace: str, redis_client: RedisClient
) -> Iterator[tuple[App, Trips]]:
    """The web's app of the test's workspace on a client that counts what it sends."""
    client, trips = counting_copy(redis_client)
    yield build_app(workspace, web_config(tmp_path, workspace), client=client), trips
    client.close()


@pytest.fixture
def site(web_app: App) -> Iterator[Site]:
    running = serve_site(web_app)
    yield running
    running.served.stop()
