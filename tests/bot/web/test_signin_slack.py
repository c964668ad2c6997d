"""Sign in with Slack over real HTTP, against a local OpenID Connect provider shaped like
Slack's, with Authlib as the client: the person is who they are in chat (a moderator by
member id), only in the workspace of their own team; an attacker's forged state, replayed
code, or an ID token for another app, from another issuer, expired or badly signed signs
nobody in; ``next`` never leads off the site."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from bot.app import App
from bot.web.people import SignedIn
from tests.bot.web.conftest import MOD, PERSON, TEAM, Site, serve_site
from tests.servers.oidc_provider import AUTHORIZE, OidcProvider

STRANGER = "U0STRANGER"


@pytest.fixture
def provider() -> Iterator[OidcProvider]:
    users = [(MOD, TEAM, "Mo"), (PERSON, TEAM, "Ann"), (STRANGER, "T0OTHERTEAM", "Stranger")]
    with OidcProvider(users) as running:
        yield running


@pytest.fixture
def slack_site(web_app: App, provider: OidcProvider) -> Iterator[Site]:
    running = serve_site(web_app, env=provider.env())
    yield running
    running.served.stop()


def consent(browser: httpx.Client, site: Site, user: str, after: str = "") -> httpx.Response:
    """Start at the sign-in page, go to the provider, sign in as ``user``: the provider's
    redirect back (not yet followed)."""
    browser.get(f"{site.base}/signin", params={"next": after} if after else None)
    start = browser.get(f"{site.base}/signin/slack")
    assert start.status_code == 302, start.text
    page = browser.get(start.headers["location"])
    assert page.status_code == 200, page.text
    fields = dict(re.findall(r'name="([a-z_]+)" value="([^"]*)"', page.text.split("<form")[1]))
    fields = {name: unescape(value) for name, value in fields.items()} | {"user": user}
    provider_url = start.headers["location"].split("?")[0]
    assert provider_url.endswith(AUTHORIZE)
    back = browser.post(provider_url, data=fields)
    assert back.status_code == 302
    return back


def session_of(site: Site, browser: httpx.Client) -> SignedIn | None:
    """Whom the browser's cookie signs in (read as the site reads it)."""
    cookie = browser.cookies.get("deliberate")
    if cookie is None:
        return None
    serializer = site.flask.session_interface.get_signing_serializer(site.flask)  # type: ignore[attr-defined]
    sid = serializer.loads(cookie).get("sid")
    found: SignedIn | None = site.flask.extensions["deliberate"].sessions.get(sid)
    return found


def test_a_moderator_signs_in_as_the_moderator_they_are_in_chat(
    slack_site: Site, provider: OidcProvider
) -> None:
    ws = slack_site.app.store.workspace
    with httpx.Client() as browser:
        back = consent(browser, slack_site, MOD, after=f"/w/{ws}/inbox")
        landed = browser.get(back.headers["location"])
        assert landed.status_code == 302 and landed.headers["location"] == f"/w/{ws}/inbox"
        who = session_of(slack_site, browser)
        assert who is not None and who.name == "Mo"
        actor = who.actor_in(ws)
        assert actor is not None and str(actor) == f"moderator:{MOD}" and actor.platform == "slack"
        assert list(who.access) == [ws]
        assert browser.get(f"{slack_site.base}/w/{ws}/inbox").status_code == 200
    [claims] = provider.issued
    assert claims["aud"] == "1234567890.0987654321" and claims.get("nonce")


def test_a_member_is_a_user_and_a_person_of_another_team_gets_no_session(
    slack_site: Site,
) -> None:
    ws = slack_site.app.store.workspace
    with httpx.Client() as browser:
        browser.get(consent(browser, slack_site, PERSON).headers["location"])
        who = session_of(slack_site, browser)
        assert who is not None and str(who.actor_in(ws)) == f"user:{PERSON}"
    with httpx.Client() as browser:
        refused = browser.get(consent(browser, slack_site, STRANGER).headers["location"])
        assert refused.status_code == 403
        assert "serves no workspace of Slack team T0OTHERTEAM" in refused.text
        assert session_of(slack_site, browser) is None
        assert browser.get(f"{slack_site.base}/w/{ws}/inbox").status_code == 302


@pytest.mark.parametrize("tamper", ["audience", "issuer", "expired", "signature"])
def test_a_bad_id_token_signs_nobody_in(
    slack_site: Site, provider: OidcProvider, tamper: str
) -> None:
    provider.tamper = tamper
    with httpx.Client() as browser:
        refused = browser.get(consent(browser, slack_site, MOD).headers["location"])
        assert refused.status_code == 400, (tamper, refused.status_code)
        assert "Slack sign-in did not succeed" in refused.text
        assert session_of(slack_site, browser) is None


def test_a_forged_state_or_a_replayed_code_signs_nobody_in(slack_site: Site) -> None:
    with httpx.Client() as browser:
        back = consent(browser, slack_site, MOD)
        query = parse_qs(urlsplit(back.headers["location"]).query)
        forged = f"{slack_site.base}/signin/slack/callback?code={query['code'][0]}&state=forged"
        assert browser.get(forged).status_code == 400
        assert session_of(slack_site, browser) is None
    with httpx.Client() as attacker:  # the victim's code, in another browser
        assert attacker.get(back.headers["location"]).status_code == 400
        assert session_of(slack_site, attacker) is None
    with httpx.Client() as browser:
        back = consent(browser, slack_site, MOD)
        assert browser.get(back.headers["location"]).status_code == 302
        browser.cookies.clear()
        assert browser.get(back.headers["location"]).status_code == 400  # used once


def test_a_refusal_at_the_provider_is_said_in_our_words_and_signs_nobody_in(
    slack_site: Site,
) -> None:
    """The provider's words (or a forged callback's) are never shown as the site's own."""
    told = "Your+account+is+locked.+Call+1-555-0100+to+unlock+it"
    with httpx.Client() as browser:
        browser.get(f"{slack_site.base}/signin/slack")
        refused = browser.get(
            f"{slack_site.base}/signin/slack/callback?error=access_denied&error_description={told}"
        )
        assert refused.status_code == 400 and "Slack sign-in did not succeed" in refused.text
        assert "access_denied" not in refused.text and "555-0100" not in refused.text
        assert session_of(slack_site, browser) is None


@pytest.mark.parametrize(
    "after",
    [
        "//evil.example/x",
        "https://evil.example/",
        "/\\evil.example",
        "/\t/evil.example",
        "/%0a/x\n",
    ],
)
def test_next_never_leads_off_the_site(slack_site: Site, after: str) -> None:
    with httpx.Client() as browser:
        landed = browser.get(consent(browser, slack_site, MOD, after=after).headers["location"])
        assert landed.status_code == 302 and landed.headers["location"] == "/"


def test_sign_in_with_slack_is_not_offered_without_the_apps_credentials(site: Site) -> None:
    page = httpx.get(f"{site.base}/signin")
    assert 'href="/signin/slack"' not in page.text and "SLACK_CLIENT_ID" in page.text
    assert httpx.get(f"{site.base}/signin/slack").status_code == 404
