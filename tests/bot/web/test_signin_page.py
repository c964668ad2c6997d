"""The sign-in page names every way in that is set up, and how each works; with none set up
it says which settings make one. As reported: with nothing configured it named the
platforms' settings alone, never the operator token, so a first look at the site found no
way in."""

from __future__ import annotations

import re

import httpx
import pytest

from bot.app import App
from bot.web.settings import WebSettings
from tests.bot.web.conftest import OPERATOR_TOKEN, serve_site

PROVIDERS = {
    "SLACK_CLIENT_ID": "1111.2222",
    "SLACK_CLIENT_SECRET": "slack-secret",
    "DISCORD_CLIENT_ID": "333344445555",
    "DISCORD_CLIENT_SECRET": "discord-secret",
}


def signin_page(app: App, token: str | None, env: dict[str, str]) -> str:
    site = serve_site(app, WebSettings(operator_token=token), env=env)
    try:
        with httpx.Client(base_url=site.base) as browser:
            answer = browser.get("/signin")
            assert answer.status_code == 200
            return re.sub(r"\s+", " ", answer.text)
    finally:
        site.served.stop()


def test_with_nothing_set_up_it_names_the_settings_of_every_way_in(web_app: App) -> None:
    page = signin_page(web_app, None, {})
    assert "No way to sign in is set up yet" in page
    for setting in (
        "SLACK_CLIENT_ID",
        "SLACK_CLIENT_SECRET",
        "DISCORD_CLIENT_ID",
        "DISCORD_CLIENT_SECRET",
        "DELIBERATE_OPERATOR_TOKEN",
        "DELIBERATE_WEB_URL",
    ):
        assert f"<code>{setting}</code>" in page, setting
    assert re.search(r"<code>http://127\.0\.0\.1:\d+/signin/slack/callback</code>", page)
    assert re.search(r"<code>http://127\.0\.0\.1:\d+/signin/discord/callback</code>", page)
    assert "at least 16 characters" in page
    assert 'action="/signin/token"' not in page and 'href="/signin/slack"' not in page


def test_the_operator_token_alone_is_a_form_that_says_what_to_paste(web_app: App) -> None:
    page = signin_page(web_app, OPERATOR_TOKEN, {})
    assert 'action="/signin/token"' in page and "Read as operator" in page
    assert "Paste the value of <code>DELIBERATE_OPERATOR_TOKEN</code>" in page
    assert "No way to sign in is set up yet" not in page
    assert "No platform sign-in is set up" in page  # and how to add one, callbacks included
    assert re.search(r"<code>http://127\.0\.0\.1:\d+/signin/slack/callback</code>", page)
    assert re.search(r"<code>http://127\.0\.0\.1:\d+/signin/discord/callback</code>", page)
    assert "<code>deliberate slack manifest --signin</code>" in page
    assert OPERATOR_TOKEN not in page


@pytest.mark.parametrize("token", [OPERATOR_TOKEN, None])
def test_each_way_in_set_up_is_named_with_how_it_works(web_app: App, token: str | None) -> None:
    page = signin_page(web_app, token, PROVIDERS)
    assert 'href="/signin/slack"' in page and "who you are in your Slack team" in page
    assert 'href="/signin/discord"' in page and "in each server the bot serves" in page
    assert ('action="/signin/token"' in page) is (token is not None)
    assert "set up" not in page  # no advice: every way in here is one already
    assert "slack-secret" not in page and "discord-secret" not in page
