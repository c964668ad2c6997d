"""The operator's window end to end, in headless Chromium (Debian's, driven by Playwright):
the model proposes ``scene.name = BRB`` in a console session; a moderator, sent to sign in
by the page they asked for, signs in with Slack against a local OpenID Connect provider,
finds the proposal in the inbox, applies it, and sees the commit in the log and its trace.
A member without the role is refused, and nothing changes. Every page is photographed: the
screenshots go to ``$DELIBERATE_SCREENSHOTS`` when set (the README's come from here:
``DELIBERATE_SCREENSHOTS=docs/screenshots pytest tests/bot/web/test_browser.py``), else to
the test's own directory."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from playwright.sync_api import Browser, Page, expect

from bot.app import App
from bot.console import Console
from core.gateway.outcome import ProposalStatus
from core.llm.chat import ChatModel
from tests.bot.web.browser import chromium
from tests.bot.web.conftest import MOD, PERSON, TEAM, Site, serve_site
from tests.factories import actor
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.servers.oidc_provider import OidcProvider

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("DELIBERATE_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def slack_oidc() -> Iterator[OidcProvider]:
    users = [(MOD, TEAM, "Mo Moderator"), (PERSON, TEAM, "Ann Member")]
    with OidcProvider(users) as provider:
        yield provider


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium for the module's tests (a launch costs seconds of CPU): each test's
    ``new_page`` opens a context of its own, with no cookie or storage of another's."""
    with chromium() as running:
        yield running


@pytest.fixture
def signed_site(web_app: App, slack_oidc: OidcProvider) -> Iterator[Site]:
    running = serve_site(web_app, env=slack_oidc.env())
    yield running
    running.served.stop()


def model_proposes(app: App, server: OpenAIServer, said: str) -> str:
    """Ann says ``said`` in a console session; the model proposes ``scene.name = BRB``:
    the proposal's id."""
    server.answer_with = proposing("scene.name", "BRB")
    client = openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0)
    runtime = app.runtime(ChatModel(client, "test-model", timeout_sec=5))
    lines: list[str] = []
    before = {p.id for p in app.gateway.proposals.listed()}
    Console(runtime, "stream-chat", actor("user:ann"), lines.append).handle(said)
    [made] = [p for p in app.gateway.proposals.listed() if p.id not in before]
    assert made.mutation.actor.kind.value == "agent", made
    return made.id


def sign_in(page: Page, site: Site, path: str, who: str, shots: Path | None = None) -> None:
    """Ask for ``path``, get sent to sign in, sign in with Slack as ``who``, land on it."""
    page.goto(site.base + path)
    expect(page).to_have_url(re.compile(r"/signin\?next="))
    expect(page.get_by_role("link", name="Sign in with Slack")).to_be_visible()
    if shots is not None:
        page.screenshot(path=shots / "signin.png", full_page=True)
    page.get_by_role("link", name="Sign in with Slack").click()
    page.get_by_role("button", name=f"Sign in as {who}").click()
    expect(page).to_have_url(site.base + path)


def flashed(page: Page) -> str:
    return page.locator(".flash").first.inner_text()


def test_a_moderator_applies_the_models_proposal_and_follows_it_to_the_trace(
    signed_site: Site, openai_server: OpenAIServer, browser: Browser, shots: Path
) -> None:
    app, ws = signed_site.app, signed_site.app.store.workspace
    proposal = model_proposes(app, openai_server, "let's go brb for five")
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    sign_in(page, signed_site, f"/w/{ws}/inbox", "Mo Moderator", shots)
    card = page.locator(f"[data-proposal='{proposal}']")
    expect(card).to_contain_text("set scene.name = BRB")
    expect(card).to_contain_text("approvals 0 of 1")
    page.screenshot(path=shots / "inbox.png", full_page=True)

    card.get_by_role("button", name="Apply", exact=True).click()
    assert flashed(page).startswith('Committed: set scene.name "BRB" (v1)')
    found = app.gateway.proposals.get(proposal)
    assert found is not None and found.status is ProposalStatus.APPLIED
    entry = app.store.get("scene.name")
    assert entry is not None and entry.value == "BRB"
    assert entry.updated_by.identity == f"slack:{MOD}" and "moderator" in entry.updated_by.roles

    page.get_by_role("link", name="Log", exact=True).click()
    row = page.locator("tr", has_text="scene.name").first
    expect(row).to_contain_text("BRB")
    expect(row).to_contain_text(f"moderator:{MOD}")
    page.screenshot(path=shots / "log.png", full_page=True)
    row.get_by_role("link", name=re.compile("trace", re.I)).first.click()
    timeline = page.locator(".timeline")
    expect(timeline).to_contain_text("scene.name")
    expect(timeline).to_contain_text("BRB")
    page.screenshot(path=shots / "trace.png", full_page=True)

    page.get_by_role("link", name="State", exact=True).click()
    expect(page.locator("table.state")).to_contain_text("scene.name")
    page.screenshot(path=shots / "state.png", full_page=True)
    page.get_by_role("link", name="Rules", exact=True).click()
    page.screenshot(path=shots / "rules.png", full_page=True)
    for name in ("signin", "inbox", "log", "trace", "state", "rules"):
        assert (shots / f"{name}.png").read_bytes().startswith(PNG), name


def test_a_member_without_the_role_sees_the_apply_refused(
    signed_site: Site, openai_server: OpenAIServer, browser: Browser, shots: Path
) -> None:
    app, ws = signed_site.app, signed_site.app.store.workspace
    proposal = model_proposes(app, openai_server, "brb?")
    page = browser.new_page(viewport={"width": 1200, "height": 700})
    sign_in(page, signed_site, f"/w/{ws}/inbox", "Ann Member")
    page.locator(f"[data-proposal='{proposal}']").get_by_role(
        "button", name="Apply", exact=True
    ).click()
    said = "Not done: scene.name is protected: only a moderator or an admin may change it"
    assert flashed(page) == said
    page.screenshot(path=shots / "inbox-refused.png", full_page=True)
    found = app.gateway.proposals.get(proposal)
    assert found is not None and found.status is ProposalStatus.PENDING
    assert app.store.version("scene.name") == 0 and len(app.log) == 0


def test_a_page_without_a_session_redirects_to_sign_in(site: Site, browser: Browser) -> None:
    page = browser.new_page()
    for path in ("/", f"/w/{site.app.store.workspace}/log", f"/w/{site.app.store.workspace}/state"):
        page.goto(site.base + path)
        expect(page).to_have_url(re.compile(r"/signin(\?next=.*)?$"))
        expect(page.get_by_role("heading", name="Sign in to Deliberate")).to_be_visible()
