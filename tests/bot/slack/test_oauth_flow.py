"""Slack as an installable app, through the real Bolt app in HTTP mode and the real
slack_sdk client: the install link, Slack's redirect back with a code, ``oauth.v2.access`` on
a local Slack server, the installation in the real Redis, each team answered with its own
token, an Enterprise Grid org-wide install, token rotation, and uninstalls."""

from __future__ import annotations

import time
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest
from redis import Redis

from bot.slack.oauth import DEFAULT_SCOPES
from bot.slack.oauth.keys import OAuthKeys
from tests.bot.slack.oauth_rig import COOKIE, OAuthRig, forget, mention
from tests.logs import logged
from tests.servers.slack_api import BotIdentity, SlackServer

SECOND = BotIdentity("T0SECOND", "Second", user_id="U0BOT2", bot_id="B0BOT2")
THIRD = BotIdentity("T0THIRD", "Third", user_id="U0BOT3", bot_id="B0BOT3")
ORG = BotIdentity(None, None, "E0ORG", "Starship", "U0ORGBOT", "B0ORGBOT", org_install=True)


@pytest.fixture
def rig(redis_client: Redis, slack: SlackServer) -> Iterator[OAuthRig]:
    running = OAuthRig(redis_client, slack).start()
    yield running
    running.stop()
    forget(redis_client, slack.client_id)


def posts_by_team(slack: SlackServer) -> list[tuple[str | None, str]]:
    """Each chat.postMessage as (the team of the token it came with, its text)."""
    return [
        (
            slack.bots[call.token].team_id or slack.bots[call.token].enterprise_id,
            call.fields["text"],
        )
        for call in slack.calls_to("chat.postMessage")
        if call.token in slack.bots
    ]


def test_the_install_link_sends_the_installer_to_slack_with_a_state(
    rig: OAuthRig, redis_client: Redis
) -> None:
    answer, state = rig.install_link()

    authorize = urlsplit(answer.headers["location"])
    assert (authorize.scheme, authorize.netloc, authorize.path) == (
        "https",
        "slack.com",
        "/oauth/v2/authorize",
    )
    query = parse_qs(authorize.query, keep_blank_values=True)
    assert query["client_id"] == [rig.slack.client_id]
    assert query["scope"][0].split(",") == list(DEFAULT_SCOPES)
    assert query["user_scope"] == [""] and "redirect_uri" not in query
    assert f"{COOKIE}={state}" in answer.headers["set-cookie"]
    assert "HttpOnly" in answer.headers["set-cookie"]
    assert 0 < redis_client.ttl(OAuthKeys(rig.slack.client_id).state(state)) <= 600


def test_the_install_link_cannot_smuggle_parameters_into_slacks_url(rig: OAuthRig) -> None:
    answer, _ = rig.install_link("team=T0SECOND%26redirect_uri%3Dhttps%3A%2F%2Fevil.example")

    query = parse_qs(urlsplit(answer.headers["location"]).query)
    assert query["team"] == ["T0SECOND&redirect_uri=https://evil.example"]
    assert "redirect_uri" not in query


def test_slacks_redirect_stores_the_installation(rig: OAuthRig, redis_client: Redis) -> None:
    rig.slack.add_install_code("c0de-second", SECOND, installer="U0ALICE")
    _, state = rig.install_link()

    answer = rig.redirect("c0de-second", state)

    assert answer.status_code == 200
    [exchange] = rig.slack.calls_to("oauth.v2.access")
    assert exchange.fields["code"] == "c0de-second" and "client_secret" not in exchange.fields
    [sent] = rig.slack.requests_to("POST", "/api/oauth.v2.access")
    assert (sent.header("Authorization") or "").startswith("Basic ")
    [token] = rig.slack.tokens_of("T0SECOND")
    installation = rig.store.find_installation(enterprise_id=None, team_id="T0SECOND")
    assert installation is not None
    assert installation.bot_token == token
    assert (installation.team_name, installation.user_id) == ("Second", "U0ALICE")
    assert (installation.bot_user_id, installation.bot_id) == ("U0BOT2", "B0BOT2")
    assert installation.is_enterprise_install is False and installation.enterprise_id is None
    assert installation.bot_refresh_token is None and installation.bot_token_expires_at is None
    bot = rig.store.find_bot(enterprise_id=None, team_id="T0SECOND")
    assert bot is not None and bot.bot_token == token
    assert rig.store.find_installation(enterprise_id=None, team_id="T0THIRD") is None
    assert not redis_client.exists(OAuthKeys(rig.slack.client_id).state(state))


def test_each_team_is_answered_with_its_own_token(rig: OAuthRig) -> None:
    rig.slack.add_install_code("c0de-second", SECOND)
    rig.slack.add_install_code("c0de-third", THIRD)
    rig.install("c0de-second")
    rig.install("c0de-third")

    assert rig.event(mention("hi", team="T0SECOND"), team="T0SECOND").status_code == 200
    assert rig.event(mention("hi", team="T0THIRD"), team="T0THIRD").status_code == 200
    rig.idle()

    assert sorted(posts_by_team(rig.slack)) == [
        ("T0SECOND", "hello T0SECOND"),
        ("T0THIRD", "hello T0THIRD"),
    ]


def test_a_team_that_never_installed_gets_nothing(rig: OAuthRig) -> None:
    rig.slack.add_install_code("c0de-second", SECOND)
    rig.install("c0de-second")

    rig.event(mention("hi", team="T0STRANGER"), team="T0STRANGER")
    rig.idle()

    assert rig.slack.calls_to("chat.postMessage") == []
    assert rig.listeners.futures == []


def test_a_state_never_issued_is_refused(rig: OAuthRig) -> None:
    rig.slack.add_install_code("c0de-second", SECOND)
    forged = "A" * 43  # the shape of ours, never issued

    answer = rig.redirect("c0de-second", forged)

    assert answer.status_code == 401
    assert rig.slack.calls_to("oauth.v2.access") == []
    assert rig.store.find_installation(enterprise_id=None, team_id="T0SECOND") is None


def test_a_state_from_another_browser_is_refused(rig: OAuthRig) -> None:
    rig.slack.add_install_code("c0de-second", SECOND)
    _, state = rig.install_link()

    assert rig.redirect("c0de-second", state, cookie="").status_code == 400
    _, other = rig.install_link()
    assert rig.redirect("c0de-second", state, cookie=other).status_code == 400

    assert rig.slack.calls_to("oauth.v2.access") == []
    assert rig.redirect("c0de-second", state).status_code == 200  # the right browser still can


def test_a_replayed_redirect_is_refused(rig: OAuthRig) -> None:
    rig.slack.add_install_code("c0de-second", SECOND)
    _, state = rig.install_link()
    assert rig.redirect("c0de-second", state).status_code == 200

    assert rig.redirect("c0de-second", state).status_code == 401

    assert len(rig.slack.calls_to("oauth.v2.access")) == 1
    assert len(rig.slack.tokens_of("T0SECOND")) == 1


def test_an_expired_state_is_refused(rig: OAuthRig, redis_client: Redis) -> None:
    rig.slack.add_install_code("c0de-second", SECOND)
    _, state = rig.install_link()
    redis_client.pexpireat(OAuthKeys(rig.slack.client_id).state(state), 1)  # long past

    assert rig.redirect("c0de-second", state).status_code == 401

    assert rig.store.find_installation(enterprise_id=None, team_id="T0SECOND") is None


def test_a_code_slack_does_not_know_installs_nothing(rig: OAuthRig) -> None:
    _, state = rig.install_link()

    assert rig.redirect("n0t-a-c0de", state).status_code == 401

    [exchange] = rig.slack.calls_to("oauth.v2.access")
    assert exchange.fields["code"] == "n0t-a-c0de"
    assert rig.slack.tokens_of("T0SECOND") == []


def test_an_enterprise_grid_org_wide_install(rig: OAuthRig) -> None:
    rig.slack.add_install_code("c0de-org", ORG)
    in_the_org = BotIdentity("T0WS2", "Workspace two", "E0ORG", "Starship", "U0WSBOT", "B0WSBOT")
    rig.slack.add_install_code("c0de-ws2", in_the_org)
    rig.install("c0de-org")
    rig.install("c0de-ws2")

    [org_token] = rig.slack.tokens_of(None, "E0ORG")
    org = rig.store.find_installation(enterprise_id="E0ORG", team_id=None)
    assert org is not None and org.bot_token == org_token
    assert org.is_enterprise_install is True and org.team_id is None
    assert (org.enterprise_name, org.enterprise_url) == ("Starship", ORG.url)
    anywhere = rig.store.find_installation(
        enterprise_id="E0ORG", team_id="T0WS1", is_enterprise_install=True
    )
    assert anywhere is not None and anywhere.bot_token == org_token
    assert rig.store.find_installation(enterprise_id="E0ORG", team_id="T0WS1") is None
    [ws2_token] = rig.slack.tokens_of("T0WS2")
    ws2 = rig.store.find_bot(enterprise_id="E0ORG", team_id="T0WS2")
    assert ws2 is not None and ws2.bot_token == ws2_token

    said = mention("hi", team="T0WS1")
    rig.event(said, team="T0WS1", enterprise="E0ORG", org_install=True)
    rig.event(mention("hi", team="T0WS2"), team="T0WS2", enterprise="E0ORG")
    rig.idle()

    posts = {call.token for call in rig.slack.calls_to("chat.postMessage")}
    assert posts == {org_token, ws2_token}


def test_a_bot_token_near_its_expiry_is_refreshed_and_saved(rig: OAuthRig) -> None:
    rig.slack.add_install_code("c0de-second", SECOND, expires_in=43200)  # Slack's 12 hours
    rig.install("c0de-second")
    installed = rig.store.find_installation(enterprise_id=None, team_id="T0SECOND")
    assert installed is not None and installed.bot_refresh_token is not None
    assert installed.bot_token_expires_at is not None
    assert installed.bot_token_expires_at > time.time() + 43000
    # eleven hours and a bit later: under Bolt's two hours before expiry
    installed.bot_token_expires_at = int(time.time()) + 600
    rig.store.save(installed)

    rig.event(mention("hi", team="T0SECOND"), team="T0SECOND")
    rig.idle()

    old, new = rig.slack.tokens_of("T0SECOND")
    assert old == installed.bot_token
    refresh = rig.slack.calls_to("oauth.v2.access")[-1]
    assert refresh.fields["grant_type"] == "refresh_token"
    assert refresh.fields["refresh_token"] == installed.bot_refresh_token
    saved = rig.store.find_installation(enterprise_id=None, team_id="T0SECOND")
    assert saved is not None and saved.bot_token == new
    assert saved.bot_refresh_token not in (None, installed.bot_refresh_token)
    assert saved.bot_token_expires_at is not None
    assert saved.bot_token_expires_at > time.time() + 43000
    assert saved.installed_at == installed.installed_at  # the same install, its new tokens
    bot = rig.store.find_bot(enterprise_id=None, team_id="T0SECOND")
    assert bot is not None and bot.bot_token == new
    assert bot.bot_refresh_token == saved.bot_refresh_token
    [post] = rig.slack.calls_to("chat.postMessage")
    assert post.token == new

    rig.event(mention("again", team="T0SECOND"), team="T0SECOND")  # no second refresh
    rig.idle()
    assert len(rig.slack.calls_to("oauth.v2.access")) == 2
    assert [call.token for call in rig.slack.calls_to("chat.postMessage")] == [new, new]


def test_an_expired_bot_token_is_refreshed_before_it_is_used(rig: OAuthRig) -> None:
    rig.slack.add_install_code("c0de-second", SECOND, expires_in=43200)
    rig.install("c0de-second")
    installed = rig.store.find_installation(enterprise_id=None, team_id="T0SECOND")
    assert installed is not None and installed.bot_token is not None
    rig.slack.add_bot(installed.bot_token, SECOND, expires_in=-1)  # Slack refuses it now
    installed.bot_token_expires_at = int(time.time()) - 1
    rig.store.save(installed)

    rig.event(mention("hi", team="T0SECOND"), team="T0SECOND")
    rig.idle()

    _, new = rig.slack.tokens_of("T0SECOND")
    assert [call.token for call in rig.slack.calls_to("chat.postMessage")] == [new]
    assert all(call.token != installed.bot_token for call in rig.slack.calls_to("auth.test")[1:])


def test_a_refresh_token_slack_refuses_answers_nothing(rig: OAuthRig) -> None:
    rig.slack.add_install_code("c0de-second", SECOND, expires_in=43200)
    rig.install("c0de-second")
    installed = rig.store.find_installation(enterprise_id=None, team_id="T0SECOND")
    assert installed is not None
    installed.bot_token_expires_at = int(time.time()) + 600
    installed.bot_refresh_token = "xoxe-1-revoked"
    rig.store.save(installed)

    rig.event(mention("hi", team="T0SECOND"), team="T0SECOND")
    rig.idle()

    assert rig.slack.calls_to("chat.postMessage") == []
    kept = rig.store.find_bot(enterprise_id=None, team_id="T0SECOND")
    assert kept is not None and kept.bot_token == installed.bot_token


def test_uninstalling_removes_the_installation(rig: OAuthRig, redis_client: Redis) -> None:
    rig.slack.add_install_code("c0de-second", SECOND)
    rig.slack.add_install_code("c0de-third", THIRD)
    rig.install("c0de-second")
    rig.install("c0de-third")

    assert rig.event({"type": "app_uninstalled"}, team="T0SECOND").status_code == 200
    rig.idle()

    assert rig.store.find_installation(enterprise_id=None, team_id="T0SECOND") is None
    assert rig.store.find_bot(enterprise_id=None, team_id="T0SECOND") is None
    assert not redis_client.exists(*OAuthKeys(rig.slack.client_id).team(None, "T0SECOND"))
    rig.event(mention("still there?", team="T0SECOND"), team="T0SECOND")
    rig.event(mention("hi", team="T0THIRD"), team="T0THIRD")
    rig.idle()
    assert posts_by_team(rig.slack) == [("T0THIRD", "hello T0THIRD")]


def test_an_org_wide_uninstall_removes_the_org_installation(rig: OAuthRig) -> None:
    rig.slack.add_install_code("c0de-org", ORG)
    rig.install("c0de-org")

    rig.event({"type": "app_uninstalled"}, team="T0WS1", enterprise="E0ORG", org_install=True)
    rig.idle()

    assert rig.store.find_installation(enterprise_id="E0ORG", team_id=None) is None
    assert (
        rig.store.find_bot(enterprise_id="E0ORG", team_id="T0WS1", is_enterprise_install=True)
        is None
    )


def test_revoked_tokens_are_removed(rig: OAuthRig) -> None:
    rig.slack.add_install_code("c0de-second", SECOND, installer="U0ALICE")
    rig.install("c0de-second")

    revoked = {"type": "tokens_revoked", "tokens": {"oauth": ["U0ALICE"], "bot": ["U0BOT2"]}}
    assert rig.event(revoked, team="T0SECOND").status_code == 200
    rig.idle()

    assert rig.store.find_installation(enterprise_id=None, team_id="T0SECOND") is None
    assert rig.store.find_bot(enterprise_id=None, team_id="T0SECOND") is None


def test_a_revoked_bot_token_is_no_longer_found(rig: OAuthRig) -> None:
    rig.slack.add_install_code("c0de-second", SECOND)
    rig.install("c0de-second")
    [token] = rig.slack.tokens_of("T0SECOND")
    rig.slack.revoke(token)

    revoked = {"type": "tokens_revoked", "tokens": {"oauth": [], "bot": ["U0BOT2"]}}
    rig.event(revoked, team="T0SECOND")
    rig.idle()
    rig.event(mention("hi", team="T0SECOND"), team="T0SECOND")
    rig.idle()

    assert rig.store.find_bot(enterprise_id=None, team_id="T0SECOND") is None
    assert rig.slack.calls_to("chat.postMessage") == []


def test_no_secret_is_logged_on_the_way(rig: OAuthRig) -> None:
    rig.slack.add_install_code("c0de-second", SECOND, expires_in=43200)
    with logged("deliberate") as logs:
        rig.install("c0de-second")
        installed = rig.store.find_installation(enterprise_id=None, team_id="T0SECOND")
        assert installed is not None
        installed.bot_token_expires_at = int(time.time()) + 600
        rig.store.save(installed)
        rig.event(mention("hi", team="T0SECOND"), team="T0SECOND")
        rig.idle()
        rig.event({"type": "app_uninstalled"}, team="T0SECOND")
        rig.idle()

    refreshed = rig.slack.calls_to("oauth.v2.access")[-1].fields["refresh_token"]
    secrets = [rig.slack.client_secret, refreshed, *rig.slack.tokens_of("T0SECOND")]
    assert len(secrets) == 4 and logs.records
    assert not any(secret in logs.text() for secret in secrets)


def test_each_teams_token_is_checked_with_slack_once_not_at_every_request(
    rig: OAuthRig,
) -> None:
    """Bolt asks ``auth.test`` who a token is before it acknowledges a request; once per
    token is enough: the installation itself is still read at every request."""
    rig.slack.add_install_code("c0de-second", SECOND)
    rig.slack.add_install_code("c0de-third", THIRD)
    rig.install("c0de-second")
    rig.install("c0de-third")
    installs_own = len(rig.slack.calls_to("auth.test"))

    for n in range(3):
        for team in ("T0SECOND", "T0THIRD"):
            assert rig.event(mention(f"hi {n}", team=team), team=team).status_code == 200
    rig.idle()

    checked = rig.slack.calls_to("auth.test")[installs_own:]
    assert sorted(rig.slack.bots[call.token].team_id or "" for call in checked) == [
        "T0SECOND",
        "T0THIRD",
    ]
    assert sorted(posts_by_team(rig.slack)) == [
        *[("T0SECOND", "hello T0SECOND")] * 3,
        *[("T0THIRD", "hello T0THIRD")] * 3,
    ]


def test_a_checked_token_of_a_team_that_uninstalled_answers_nothing(rig: OAuthRig) -> None:
    rig.slack.add_install_code("c0de-second", SECOND)
    rig.install("c0de-second")
    rig.event(mention("hi", team="T0SECOND"), team="T0SECOND")  # its token checked, kept
    rig.idle()

    rig.event({"type": "app_uninstalled"}, team="T0SECOND")
    rig.idle()
    rig.event(mention("still there?", team="T0SECOND"), team="T0SECOND")
    rig.idle()

    assert posts_by_team(rig.slack) == [("T0SECOND", "hello T0SECOND")]
