"""Wrong tokens meet a limit (issue 41: 300 wrong operator tokens in 2.4 s met none): per
address and per token, counted in Redis so that every web process shares the counts; past
either, every try is refused with 429 and ``Retry-After`` until the window passes, the right
token's too. The sign-in form, the Bearer header and ``/metrics``' token alike. Each test has
a token and addresses of its own (documentation ranges), so that no count is another's."""

from __future__ import annotations

import re
import secrets

from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from bot.app import App
from bot.web.settings import WebSettings
from bot.web.site import create_app
from tests.polling import wait_for

PER_ADDRESS = WebSettings().signin_per_address


def address() -> str:
    """An address of this test's own: an IPv6 /64 of the documentation range."""
    return f"2001:db8:{secrets.randbelow(2**16):x}:{secrets.randbelow(2**16):x}::7"


def site(app: App, token: str, **limits: int) -> Flask:
    return create_app(app, WebSettings(operator_token=token, **limits), env={})


class Browser:
    """A browser at one address: the sign-in form, with its cookie and CSRF token."""

    def __init__(self, flask: Flask, remote: str) -> None:
        self.client: FlaskClient = flask.test_client()
        self.remote = remote
        page = self.client.get("/signin", environ_base={"REMOTE_ADDR": remote})
        found = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
        assert found is not None
        self.csrf = found.group(1)

    def paste(self, token: str) -> TestResponse:
        return self.client.post(
            "/signin/token",
            data={"token": token, "csrf_token": self.csrf},
            environ_base={"REMOTE_ADDR": self.remote},
        )

    def signed_in(self, workspace: str) -> bool:
        page = self.client.get(f"/w/{workspace}/state", environ_base={"REMOTE_ADDR": self.remote})
        return page.status_code == 200


def refused(answer: TestResponse, window: int) -> bool:
    return answer.status_code == 429 and 1 <= int(answer.headers["Retry-After"]) <= window


def test_300_wrong_tokens_meet_the_limit_and_the_right_one_then_waits_too(web_app: App) -> None:
    token, remote = secrets.token_urlsafe(24), address()
    flask = site(web_app, token)
    window = WebSettings().signin_window_sec
    browser = Browser(flask, remote)
    answers = [browser.paste(f"guess-{n:04d}-0123456789abcdef") for n in range(300)]
    assert [a.status_code for a in answers[:PER_ADDRESS]] == [303] * PER_ADDRESS
    assert all(refused(a, window) for a in answers[PER_ADDRESS:])
    assert (
        "every try is refused for" in answers[-1].text and "the right token too" in answers[-1].text
    )
    right = browser.paste(token)
    assert refused(right, window) and not browser.signed_in(web_app.store.workspace)
    # another web process (another app on the same Redis) refuses the address as well
    assert refused(Browser(site(web_app, token), remote).paste(token), window)
    # another address is not held back (the token's own count is below its limit)
    elsewhere = Browser(flask, address())
    assert elsewhere.paste(token).status_code == 302
    assert elsewhere.signed_in(web_app.store.workspace)


def test_wrong_tries_from_many_addresses_hold_the_token_back(web_app: App) -> None:
    token = secrets.token_urlsafe(24)
    flask = site(web_app, token, signin_per_address=1000, signin_per_token=20)
    for _ in range(20):
        assert Browser(flask, address()).paste("not-it-0123456789abcdef").status_code == 303
    fresh = Browser(flask, address())
    assert refused(fresh.paste(token), 900) and not fresh.signed_in(web_app.store.workspace)
    # another token (another deployment's) has a count of its own
    other = secrets.token_urlsafe(24)
    assert Browser(site(web_app, other), address()).paste(other).status_code == 302


def test_wrong_bearer_headers_count_as_tries(web_app: App) -> None:
    token, remote = secrets.token_urlsafe(24), address()
    client = site(web_app, token).test_client()
    url = f"/w/{web_app.store.workspace}/state"

    def get(given: str, at: str = remote) -> TestResponse:
        return client.get(
            url, headers={"Authorization": f"Bearer {given}"}, environ_base={"REMOTE_ADDR": at}
        )

    assert [get("wrong-0123456789abcdef").status_code for _ in range(PER_ADDRESS)] == [302] * 10
    again = get("wrong-0123456789abcdef")
    assert refused(again, 900) and "too many wrong tokens" in again.text
    assert refused(get(token), 900)  # the right one too, from there
    assert get(token, address()).status_code == 200


def test_wrong_metrics_tokens_count_as_tries(web_app: App) -> None:
    token, remote = secrets.token_urlsafe(24), address()
    client = create_app(web_app, WebSettings(metrics_token=token), env={}).test_client()

    def scrape(given: str) -> TestResponse:
        return client.get(
            "/metrics",
            headers={"Authorization": f"Bearer {given}"},
            environ_base={"REMOTE_ADDR": remote},
        )

    assert {scrape("wrong-0123456789abcdef").status_code for _ in range(PER_ADDRESS)} == {401}
    assert refused(scrape(token), 900)


def test_the_right_token_signs_in_once_the_window_has_passed(web_app: App) -> None:
    window = 1
    token, remote = secrets.token_urlsafe(24), address()
    flask = site(web_app, token, signin_per_address=3, signin_window_sec=window)
    browser = Browser(flask, remote)
    assert [browser.paste("wrong-0123456789abcdef").status_code for _ in range(3)] == [303] * 3
    assert refused(browser.paste(token), window)
    assert wait_for(lambda: browser.paste(token).status_code == 302, "the window to pass", 10)
    assert browser.signed_in(web_app.store.workspace)
