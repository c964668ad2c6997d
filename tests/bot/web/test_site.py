"""The site's guard and settings over real HTTP: no page without a session (every route the
app has is tried), cookies and headers as a browser should get them, the operator token as a
Bearer header, sign-out ending the session for good, and settings refused with their name."""

from __future__ import annotations

import re

import httpx
import pytest

from bot.app import App
from bot.chat.people import person
from bot.web.settings import WebSettings, WebSettingsError
from tests.bot.web.conftest import OPERATOR_TOKEN, Site, serve_site
from tests.bot.web.sessions import csrf_of, person_in, signed_in

OPEN = {"static", "favicon", "health", "metrics.metrics", "signin.page"}


def routes(site: Site) -> list[tuple[str, str]]:
    """(method, path) of every route but the open ones, with a made-up value per part."""
    found = []
    for rule in site.flask.url_map.iter_rules():
        if rule.endpoint in OPEN or rule.endpoint.startswith("signin."):
            continue
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", lambda m: f"x{m.group(1)}", rule.rule)
        path = path.replace("xworkspace", site.app.store.workspace)
        found += [
            (method, path) for method in sorted(rule.methods or ()) if method in ("GET", "POST")
        ]
    return found


def test_no_page_or_action_is_reached_without_a_session(site: Site) -> None:
    tried = routes(site)
    assert ("GET", f"/w/{site.app.store.workspace}/inbox") in tried
    assert any(method == "POST" for method, _ in tried)
    with httpx.Client(base_url=site.base) as nobody:
        for method, path in tried:
            answer = nobody.request(method, path)
            if method == "GET":
                assert answer.status_code == 302, (path, answer.status_code)
                assert answer.headers["location"].startswith("/signin?next="), path
            else:
                assert answer.status_code == 401, (path, answer.status_code)


def test_a_page_asked_for_without_a_session_leads_to_sign_in_and_back(site: Site) -> None:
    inbox = f"/w/{site.app.store.workspace}/inbox"
    with httpx.Client(base_url=site.base) as browser:
        answer = browser.get(inbox)
        assert answer.headers["location"] == f"/signin?next={inbox}"
        signin = browser.get(answer.headers["location"])
        token = re.search(r'name="csrf_token" value="([^"]+)"', signin.text)
        assert token is not None
        landed = browser.post(
            "/signin/token", data={"token": OPERATOR_TOKEN, "csrf_token": token.group(1)}
        )
        assert landed.status_code == 302 and landed.headers["location"] == inbox


def test_the_cookie_is_httponly_lax_and_secure_behind_https(web_app: App) -> None:
    for url, secure in ((None, False), ("https://deliberate.example.org", True)):
        site = serve_site(web_app, WebSettings(public_url=url, operator_token=OPERATOR_TOKEN))
        try:
            with httpx.Client(base_url=site.base) as browser:
                cookie = browser.get("/signin").headers["set-cookie"]
        finally:
            site.served.stop()
        assert cookie.startswith("deliberate=") and "HttpOnly" in cookie
        assert "SameSite=Lax" in cookie
        assert ("Secure" in cookie) is secure, cookie


def test_pages_carry_headers_that_keep_them_out_of_frames_and_caches(site: Site) -> None:
    moderator = person("slack", "U0MOD", ("moderator",))
    with signed_in(site, person_in(site.app.store.workspace, moderator)) as browser:
        answer = browser.get(f"/w/{site.app.store.workspace}/state")
    assert answer.status_code == 200
    assert answer.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["x-content-type-options"] == "nosniff"


def test_the_operator_token_reads_as_a_bearer_header_and_a_wrong_one_does_not(
    site: Site,
) -> None:
    state = f"{site.base}/w/{site.app.store.workspace}/state"
    right = httpx.get(state, headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"})
    assert right.status_code == 200 and "operator (read-only)" in right.text
    wrong = httpx.get(state, headers={"Authorization": f"Bearer {OPERATOR_TOKEN}x"})
    assert wrong.status_code == 302


def test_sign_out_ends_the_session_even_for_a_copy_of_its_cookie(site: Site) -> None:
    moderator = person("slack", "U0MOD", ("moderator",))
    state = f"/w/{site.app.store.workspace}/state"
    with signed_in(site, person_in(site.app.store.workspace, moderator)) as browser:
        token = csrf_of(browser, state)
        kept = dict(browser.cookies)
        assert browser.post("/signout", data={"csrf_token": token}).status_code == 303
        assert browser.get(state).status_code == 302
    with httpx.Client(base_url=site.base, cookies=kept) as copy:
        assert copy.get(state).status_code == 302


def test_a_workspace_nobody_has_is_not_found_even_for_the_operator(site: Site) -> None:
    answer = httpx.get(
        f"{site.base}/w/no-such-workspace/state",
        headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"},
    )
    assert answer.status_code == 404 and "no-such-workspace" in answer.text


def test_health_answers_without_a_session(site: Site) -> None:
    answer = httpx.get(f"{site.base}/health")
    assert (answer.status_code, answer.text) == (200, "ok\n")


@pytest.mark.parametrize(
    ("host", "env", "named"),
    [
        ("0.0.0.0", {}, "DELIBERATE_WEB_URL"),
        ("0.0.0.0", {"DELIBERATE_WEB_URL": "http://deliberate.example.org"}, "https"),
        ("127.0.0.1", {"DELIBERATE_WEB_URL": "deliberate.example.org"}, "DELIBERATE_WEB_URL"),
        ("127.0.0.1", {"DELIBERATE_OPERATOR_TOKEN": "short"}, "DELIBERATE_OPERATOR_TOKEN"),
        ("::1", {"DELIBERATE_METRICS_TOKEN": "x" * 15}, "DELIBERATE_METRICS_TOKEN"),
    ],
)
def test_settings_a_site_cannot_start_with_are_named(
    host: str, env: dict[str, str], named: str
) -> None:
    with pytest.raises(WebSettingsError, match=named):
        WebSettings.from_env(host, env)


def test_settings_behind_a_tls_router() -> None:
    env = {
        "DELIBERATE_WEB_URL": "https://deliberate.example.org/",
        "DELIBERATE_OPERATOR_TOKEN": "t" * 16,
    }
    settings = WebSettings.from_env("0.0.0.0", env)
    assert settings.public_url == "https://deliberate.example.org" and settings.secure_cookies
    assert settings.operator_token == "t" * 16 and settings.metrics_token is None
