"""One deployment, many Slack teams, end to end through the bot's own Bolt app and adapter:
a team installs the app (install link, Slack's redirect, ``oauth.v2.access`` on the local
Slack server), its events land in its own workspace and are answered with its own token, and
its uninstall removes the installation, after which it is not heard."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import Executor
from pathlib import Path

import pytest
from redis import Redis
from slack_bolt import App as BoltApp
from slack_bolt.oauth.oauth_settings import OAuthSettings

from bot.app import App, build_app
from bot.chat.workspaces import Workspaces
from bot.slack.adapter import SlackAdapter
from bot.slack.bolt import build_bolt_app
from bot.slack.oauth import OAuthConfig
from bot.slack.settings import SlackSettings
from tests.bot.slack.oauth_rig import SIGNING_SECRET, OAuthRig, forget, mention
from tests.conftest import delete_workspace
from tests.reads import footprints
from tests.servers.slack_api import BotIdentity, SlackServer
from tests.team_config import team_config

SECOND = BotIdentity("T0SECOND", "Second", user_id="U0BOT2", bot_id="B0BOT2")
THIRD = BotIdentity("T0THIRD", "Third", user_id="U0BOT3", bot_id="B0BOT3")


@pytest.fixture
def names(redis_client: Redis) -> Iterator[dict[str, str]]:
    """The listed team's workspace, unique to the test; the any_team one's is derived."""
    listed = {"T0SECOND": f"second-{uuid.uuid4().hex[:8]}", "T0THIRD": "slack-T0THIRD"}
    delete_workspace(redis_client, listed["T0THIRD"])
    yield listed
    for name in listed.values():
        delete_workspace(redis_client, name)


@pytest.fixture
def home(redis_client: Redis, workspace: str, tmp_path: Path, names: dict[str, str]) -> App:
    """T0SECOND listed (rules run there); any other team that installs is served too."""
    tenants = (
        f"  slack:\n    teams:\n      - {{id: T0SECOND, workspace: {names['T0SECOND']}}}\n"
        "    any_team: true\n"
    )
    return build_app(workspace, team_config(tmp_path, [], [], tenants), client=redis_client)


@pytest.fixture
def rig(redis_client: Redis, slack: SlackServer, home: App) -> Iterator[OAuthRig]:
    env = slack.oauth_env() | {"SLACK_SIGNING_SECRET": SIGNING_SECRET}
    settings = SlackSettings.from_env(env)

    def build(config: OAuthConfig, oauth: OAuthSettings, listeners: Executor) -> BoltApp:
        assert settings.oauth == config
        adapter = SlackAdapter(Workspaces(home, use_env=False), settings.web_client())
        return build_bolt_app(adapter, settings, executor=listeners, oauth=oauth)

    running = OAuthRig(redis_client, slack, build=build).start()
    yield running
    running.stop()
    forget(redis_client, slack.client_id)


def workspace_of(home: App, name: str) -> App:
    return home.for_workspace(name, rules=False)


def test_installed_teams_each_talk_in_their_own_workspace_with_their_own_token(
    rig: OAuthRig, home: App, names: dict[str, str]
) -> None:
    rig.slack.add_install_code("c0de-second", SECOND)
    rig.slack.add_install_code("c0de-third", THIRD)
    rig.install("c0de-second")
    rig.install("c0de-third")
    for team in ("T0SECOND", "T0THIRD"):
        said = mention("what if we used postgres", team=team)
        assert rig.event(said, team=team).status_code == 200
        rig.idle()
        [post] = [
            c for c in rig.slack.calls_to("chat.postMessage") if c.fields["thread_ts"] == said["ts"]
        ]
        assert post.token in rig.slack.tokens_of(team)  # answered with that team's token
        session = f"slack:{said['channel']}:{said['ts']}"
        mine = workspace_of(home, names[team]).runtime(use_env=False).sessions
        assert mine.exists(session)
        others = [n for t, n in names.items() if t != team] + [home.store.workspace]
        for other in others:
            assert not workspace_of(home, other).runtime(use_env=False).sessions.exists(session)
    seen = {w.workspace: w for w in Workspaces(home, use_env=False).directory.seen()}
    assert {names["T0SECOND"], "slack-T0THIRD"} <= set(seen)
    assert names["T0SECOND"] in home.rule_workspaces()  # listed: rules run there
    assert "slack-T0THIRD" not in home.rule_workspaces()  # any_team: none


def test_an_uninstalled_team_is_not_heard_again(rig: OAuthRig, home: App) -> None:
    rig.slack.add_install_code("c0de-second", SECOND)
    rig.install("c0de-second")
    assert rig.store.find_bot(enterprise_id=None, team_id="T0SECOND") is not None
    rig.event({"type": "app_uninstalled"}, team="T0SECOND")
    rig.idle()
    assert rig.store.find_bot(enterprise_id=None, team_id="T0SECOND") is None
    rig.event(mention("still there?", team="T0SECOND"), team="T0SECOND")
    rig.idle()
    assert rig.slack.calls_to("chat.postMessage") == []


def test_a_team_that_installed_but_is_not_served_is_told_nothing(
    redis_client: Redis, slack: SlackServer, workspace: str, tmp_path: Path
) -> None:
    """Without any_team, an install from a team nobody listed stores its token, but its
    events change nothing."""
    tenants = "  slack:\n    teams: [T0SECOND]\n"
    listed_only = build_app(workspace, team_config(tmp_path, [], [], tenants), client=redis_client)
    env = slack.oauth_env() | {"SLACK_SIGNING_SECRET": SIGNING_SECRET}
    settings = SlackSettings.from_env(env)

    def build(config: OAuthConfig, oauth: OAuthSettings, listeners: Executor) -> BoltApp:
        adapter = SlackAdapter(Workspaces(listed_only, use_env=False), settings.web_client())
        return build_bolt_app(adapter, settings, executor=listeners, oauth=oauth)

    rig = OAuthRig(redis_client, slack, build=build).start()
    try:
        slack.add_install_code("c0de-third", THIRD)
        rig.install("c0de-third")
        rig.event(mention("hello?", team="T0THIRD"), team="T0THIRD")
        rig.idle()
        assert slack.calls_to("chat.postMessage") == []
        assert footprints(redis_client, ["slack-T0THIRD"])["slack-T0THIRD"] == (frozenset(), 0)
    finally:
        rig.stop()
        forget(redis_client, slack.client_id)
