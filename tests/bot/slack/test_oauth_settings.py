"""The OAuth flow's parts on their own: its settings from the environment (every mistake named
by its variable, the secret never shown), the one-time install states in the real Redis, and
the client the flow talks to Slack with."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis import Redis

from bot.slack.manifest.document import Manifest, app_manifest
from bot.slack.oauth import (
    DEFAULT_SCOPES,
    INSTALL_PATH,
    REDIRECT_PATH,
    OAuthConfig,
    RedisInstallationStore,
    RedisOAuthStateStore,
    oauth_settings,
)
from bot.slack.oauth.keys import OAuthKeys
from bot.slack.oauth.states import MAX_OUTSTANDING, TooManyInstallStates
from tests.bot.slack.oauth_rig import forget, new_client_id
from tests.logs import logged
from tests.servers.slack_api import CLIENT_ID, CLIENT_SECRET, BotIdentity, SlackServer

ENV = {"SLACK_CLIENT_ID": CLIENT_ID, "SLACK_CLIENT_SECRET": CLIENT_SECRET}


@pytest.fixture
def states(redis_client: Redis) -> Iterator[RedisOAuthStateStore]:
    client_id = new_client_id()
    yield RedisOAuthStateStore(redis_client, client_id)
    forget(redis_client, client_id)


def config(**env: str) -> OAuthConfig:
    found = OAuthConfig.from_env(ENV | env)
    assert found is not None
    return found


def refused(**env: str) -> str:
    with pytest.raises(ValueError) as caught:
        OAuthConfig.from_env(ENV | env)
    return str(caught.value)


# --- the environment ---------------------------------------------------------------


def test_without_a_client_id_there_is_no_oauth(redis_client: Redis) -> None:
    assert OAuthConfig.from_env({}) is None
    assert OAuthConfig.from_env({"SLACK_CLIENT_ID": "  ", "SLACK_BOT_TOKEN": "xoxb-1"}) is None
    assert oauth_settings({"SLACK_BOT_TOKEN": "xoxb-1"}, redis_client) is None


def test_the_defaults_ask_for_the_manifests_bot_scopes() -> None:
    manifest = app_manifest(Manifest(url="https://bot.example.com"))

    found = config()

    assert found.scopes == DEFAULT_SCOPES == tuple(manifest["oauth_config"]["scopes"]["bot"])
    assert found.redirect_uri is None and found.api_url == "https://slack.com/api/"
    assert CLIENT_SECRET not in repr(found)


def test_scopes_redirect_and_api_url_from_the_environment() -> None:
    found = config(
        SLACK_SCOPES="chat:write, commands  app_mentions:read,chat:write",
        SLACK_REDIRECT_URI="https://bot.example.org/slack/oauth_redirect",
        SLACK_API_URL="http://127.0.0.1:9/api",
    )

    assert found.scopes == ("chat:write", "commands", "app_mentions:read")
    assert found.redirect_uri == "https://bot.example.org/slack/oauth_redirect"
    assert found.api_url == "http://127.0.0.1:9/api/"
    local = config(SLACK_REDIRECT_URI="http://localhost:3000/slack/oauth_redirect")
    assert local.redirect_uri == "http://localhost:3000/slack/oauth_redirect"


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"SLACK_CLIENT_SECRET": ""}, "SLACK_CLIENT_SECRET"),
        ({"SLACK_CLIENT_SECRET": "two words"}, "SLACK_CLIENT_SECRET"),
        ({"SLACK_CLIENT_SECRET": "s3cr\u00e9t"}, "SLACK_CLIENT_SECRET"),
        ({"SLACK_CLIENT_ID": "A0TEST"}, "SLACK_CLIENT_ID"),
        ({"SLACK_CLIENT_ID": "111.222&x=1"}, "SLACK_CLIENT_ID"),
        ({"SLACK_SCOPES": "chat:write,Chat Write!"}, "SLACK_SCOPES"),
        ({"SLACK_SCOPES": "chat:write,bot&redirect_uri=x"}, "SLACK_SCOPES"),
        ({"SLACK_REDIRECT_URI": "http://bot.example.org/slack/oauth_redirect"}, "REDIRECT"),
        ({"SLACK_REDIRECT_URI": "https://bot.example.org/oauth"}, "SLACK_REDIRECT_URI"),
        ({"SLACK_REDIRECT_URI": "https://bot.example.org/slack/oauth_redirect?x=1"}, "REDIRECT"),
        ({"SLACK_REDIRECT_URI": "https://u:p@bot.example.org/slack/oauth_redirect"}, "REDIRECT"),
        ({"SLACK_REDIRECT_URI": "/slack/oauth_redirect"}, "SLACK_REDIRECT_URI"),
        ({"SLACK_API_URL": "ftp://slack.com/api/"}, "SLACK_API_URL"),
        ({"SLACK_API_URL": "slack.com/api"}, "SLACK_API_URL"),
    ],
)
def test_a_missing_or_malformed_variable_is_named(env: dict[str, str], named: str) -> None:
    message = refused(**env)

    assert named in message
    assert CLIENT_SECRET not in message and "s3cr" not in message and "two words" not in message


def test_the_settings_bolt_gets(redis_client: Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_REDIRECT_URI", "https://elsewhere.example/slack/oauth_redirect")
    api = "http://127.0.0.1:9/api/"

    settings = oauth_settings(ENV | {"SLACK_API_URL": api}, redis_client)

    assert settings is not None
    assert (settings.client_id, settings.client_secret) == (CLIENT_ID, CLIENT_SECRET)
    assert (settings.install_path, settings.redirect_uri_path) == (INSTALL_PATH, REDIRECT_PATH)
    assert settings.install_page_rendering_enabled is False
    assert list(settings.scopes or []) == list(DEFAULT_SCOPES) and not settings.user_scopes
    assert settings.redirect_uri is None  # from the env given, not from os.environ
    assert "redirect_uri" not in settings.authorize_url_generator.generate("s")
    store = settings.installation_store
    assert isinstance(store, RedisInstallationStore) and store.client_id == CLIENT_ID
    assert isinstance(settings.state_store, RedisOAuthStateStore)
    assert settings.state_store.max_outstanding == MAX_OUTSTANDING == 10_000
    rotator = settings.authorize.token_rotator  # type: ignore[attr-defined]
    assert rotator.client.base_url == api and rotator.client_id == CLIENT_ID


def test_the_flows_client_never_logs_its_secrets() -> None:
    with SlackServer() as slack:
        slack.add_install_code("c0de", BotIdentity("T0SECOND", "Second"), expires_in=43200)
        client = config(SLACK_API_URL=slack.api_url).web_client()
        assert client.token is None and client.base_url == slack.api_url
        with logged("deliberate.slack.oauth") as logs:
            granted = client.oauth_v2_access(
                client_id=CLIENT_ID, client_secret=CLIENT_SECRET, code="c0de"
            )

    secrets = [CLIENT_SECRET, "c0de", granted["access_token"], granted["refresh_token"]]
    assert not any(secret in logs.text() for secret in secrets)


# --- the install states ------------------------------------------------------------


def test_a_state_is_good_once(states: RedisOAuthStateStore, redis_client: Redis) -> None:
    state = states.issue()

    assert len(state) == 43 and state != states.issue()
    assert 0 < redis_client.ttl(states.keys.state(state)) <= 600
    assert redis_client.zscore(states.keys.states, state) is not None
    assert states.consume(state) is True
    assert redis_client.zscore(states.keys.states, state) is None
    assert states.consume(state) is False


def test_an_expired_state_is_refused(states: RedisOAuthStateStore, redis_client: Redis) -> None:
    state = states.issue()
    redis_client.pexpireat(states.keys.state(state), 1)  # its time long past

    assert states.consume(state) is False


def test_the_expiry_is_the_stores(redis_client: Redis) -> None:
    client_id = new_client_id()
    short = RedisOAuthStateStore(redis_client, client_id, expiration_seconds=30)
    try:
        assert 0 < redis_client.ttl(OAuthKeys(client_id).state(short.issue())) <= 30
    finally:
        forget(redis_client, client_id)
    with pytest.raises(ValueError):
        RedisOAuthStateStore(redis_client, client_id, expiration_seconds=0)


def test_the_states_outstanding_are_capped(redis_client: Redis) -> None:
    client_id = new_client_id()
    two = RedisOAuthStateStore(redis_client, client_id, max_outstanding=2)
    try:
        first, _ = two.issue(), two.issue()
        with pytest.raises(TooManyInstallStates) as full:
            two.issue()
        assert full.value.outstanding == 2 and 590 <= full.value.retry_after_sec <= 600
        assert two.consume(first) is True
        two.issue()  # room again
        assert redis_client.zcard(two.keys.states) == 2
    finally:
        forget(redis_client, client_id)
    with pytest.raises(ValueError):
        RedisOAuthStateStore(redis_client, client_id, max_outstanding=0)


@given(st.text(max_size=80))
def test_what_a_browser_brings_back_is_refused_unless_issued(text: str) -> None:
    store = RedisOAuthStateStore(Redis.from_url("redis://unused.invalid:1"), "111.222")
    if len(text) != 43:  # no Redis is reached for anything not shaped like a state
        assert store.consume(text) is False


def test_two_redirects_racing_with_one_state_pass_once(states: RedisOAuthStateStore) -> None:
    issued = [states.issue() for _ in range(50)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(states.consume, issued * 4))

    passed = [state for state, ok in zip(issued * 4, outcomes, strict=True) if ok]
    assert sorted(passed) == sorted(issued)
