"""Sign in with Discord over real HTTP, against a local Discord speaking OAuth2 and the
REST routes a sign-in reads, with Authlib as the client: roles as the Discord adapter gives
them (a role by name in the server's own section, a permission, an owner), only in the
servers the bot serves; nobody of an unserved server gets a session."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import httpx
import pytest

from bot.app import App, build_app
from core.redis.client import RedisClient
from tests.bot.web.conftest import Site, serve_site
from tests.bot.web.test_signin_slack import session_of
from tests.servers.discord_oauth import DiscordOAuth, Member
from tests.team_config import team_config

SERVED, OTHER = "81384788765712384", "99999999999999999"
MODS_ROLE, PLAIN_ROLE = "41771983423143936", "41771983423143937"
MANAGE_GUILD = 1 << 5
USERS = [
    Member("1001", "Rolf", {SERVED: (False, 0, [MODS_ROLE]), OTHER: (False, 0, [])}),
    Member("1002", "Perm", {SERVED: (False, MANAGE_GUILD, [PLAIN_ROLE])}),
    Member("1003", "Plain", {SERVED: (False, 0, [PLAIN_ROLE])}),
    Member("1004", "Owner", {SERVED: (True, 0, [])}),
    Member("1005", "Elsewhere", {OTHER: (True, 0, [])}),
]


def discord_tenants(workspace: str) -> str:
    return f"""\
  discord:
    servers:
      - id: "{SERVED}"
        workspace: {workspace}
        roles:
          moderator: {{groups: ["discord:Moderators", "discord:permission:manage_guild"]}}
    any_server: false
    direct_messages: false
"""


@pytest.fixture
def discord() -> Iterator[DiscordOAuth]:
    roles = {SERVED: {MODS_ROLE: "Moderators", PLAIN_ROLE: "Viewers"}, OTHER: {}}
    with DiscordOAuth(USERS, roles) as running:
        yield running


@pytest.fixture
def discord_app(tmp_path: Path, redis_client: RedisClient, workspace: str) -> App:
    config = team_config(tmp_path, [], [], discord_tenants(workspace))
    return build_app(workspace, config, client=redis_client)


def signed_in_as(
    app: App, discord: DiscordOAuth, name: str, *, bot: bool = True
) -> tuple[int, Site, httpx.Client]:
    site = serve_site(app, env=discord.env(bot=bot))
    browser = httpx.Client()
    start = browser.get(f"{site.base}/signin/discord")
    assert start.status_code == 302, start.text
    page = browser.get(start.headers["location"])
    form = next(f for f in page.text.split("<form")[1:] if f"Sign in as {name}<" in f)
    fields = {n: unescape(v) for n, v in re.findall(r'name="([a-z_]+)" value="([^"]*)"', form)}
    back = browser.post(start.headers["location"].split("?")[0], data=fields)
    landed = browser.get(back.headers["location"])
    return landed.status_code, site, browser


@pytest.mark.parametrize(
    ("name", "kind"),
    [("Rolf", "moderator"), ("Perm", "moderator"), ("Owner", "moderator"), ("Plain", "user")],
)
def test_roles_are_read_as_the_discord_adapter_reads_them(
    discord_app: App, discord: DiscordOAuth, name: str, kind: str
) -> None:
    status, site, browser = signed_in_as(discord_app, discord, name)
    try:
        assert status == 302
        who = session_of(site, browser)
        assert who is not None and who.platform == "discord" and who.name == name
        assert list(who.access) == [discord_app.store.workspace]  # never the unserved server
        actor = who.actor_in(discord_app.store.workspace)
        assert actor is not None and actor.kind.value == kind, actor
    finally:
        browser.close()
        site.served.stop()


def test_a_role_name_counts_only_when_the_bot_can_name_it(
    discord_app: App, discord: DiscordOAuth
) -> None:
    status, site, browser = signed_in_as(discord_app, discord, "Rolf", bot=False)
    try:
        who = session_of(site, browser)
        assert status == 302 and who is not None
        assert str(who.actor_in(discord_app.store.workspace)) == "user:1001"
    finally:
        browser.close()
        site.served.stop()


def test_a_person_of_no_served_server_gets_no_session(
    discord_app: App, discord: DiscordOAuth
) -> None:
    status, site, browser = signed_in_as(discord_app, discord, "Elsewhere")
    try:
        assert status == 403 and session_of(site, browser) is None
    finally:
        browser.close()
        site.served.stop()
