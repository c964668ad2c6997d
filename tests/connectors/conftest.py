"""Local servers speaking each service's protocol, one per test, and helpers to run an action
the way a worker does: validate the arguments with the action's model, then run it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from connectors.registry import default_registry
from rules.connector_api import ActionContext
from tests.logs import LogLines, logged
from tests.servers.discord_api import DiscordServer
from tests.servers.helix import HelixServer
from tests.servers.obs import ObsServer
from tests.servers.slack_api import SlackServer
from tests.servers.webhook import WebhookServer

REGISTRY = default_registry()


def context(env: Mapping[str, str], key: str = "mut-1:rule-1:0") -> ActionContext:
    return ActionContext(idempotency_key=key, correlation_id="corr-test", env=dict(env))


def run(name: str, args: dict[str, Any], ctx: ActionContext) -> Any:
    action = REGISTRY.get(name)
    return action.run(action.args.model_validate(args), ctx)


def reconcile(name: str, args: dict[str, Any], ctx: ActionContext) -> bool:
    action = REGISTRY.get(name)
    assert action.reconcile is not None
    return action.reconcile(action.args.model_validate(args), ctx)


@pytest.fixture
def all_logs() -> Iterator[LogLines]:
    """Every record from every logger (that propagates), while the test runs."""
    with logged() as handler:
        yield handler


@pytest.fixture
def obs() -> Iterator[ObsServer]:
    with ObsServer() as server:
        yield server


@pytest.fixture
def obs_locked() -> Iterator[ObsServer]:
    with ObsServer(password="obs-secret-pw") as server:
        yield server


@pytest.fixture
def helix() -> Iterator[HelixServer]:
    with HelixServer() as server:
        yield server


@pytest.fixture
def slack() -> Iterator[SlackServer]:
    with SlackServer(channels={"C0GENERAL"}) as server:
        yield server


@pytest.fixture
def discord() -> Iterator[DiscordServer]:
    with DiscordServer(channels={"1234567890"}) as server:
        yield server


@pytest.fixture
def webhook() -> Iterator[WebhookServer]:
    with WebhookServer(secret="hook-signing-secret") as server:
        yield server
