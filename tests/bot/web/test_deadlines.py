"""Deadlines in the web inspector, over real HTTP and in headless Chromium: the Inbox says of
each pending proposal until when it may be applied, when it escalates (or was escalated, and
when), and how long its change lasts once applied; of one resolved lately, when it expired
or when its change reverts (or reverted, by which mutation). The State page says of a key
changed for a while when it reverts and which mutation reverts it, and after the revert
that it was reverted, by that mutation (a key the revert deleted, below). Each in UTC and
how far off by the Redis server's clock, a deadline past said as past. A reason next to them
is text, never markup. Times in the past are made by writing the proposal as it would be
had it been made earlier; a revert is swept at its deadline (no test waits for a clock)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.sync_api import expect
from redis import Redis

from bot.app import App, build_app
from bot.chat.people import person
from bot.proposals.escalation import Escalations
from core.gateway.outcome import Pending, Proposal, ProposalStatus
from core.gateway.timed import revert_due
from core.state.commit_result import Committed
from core.state.scripts import server_ms
from tests.bot.web.browser import chromium
from tests.bot.web.conftest import MOD, PERSON, Site, serve_site, web_config
from tests.bot.web.sessions import person_in, signed_in
from tests.factories import actor, mutation

MODERATOR = person("slack", MOD, ("moderator",))
MEMBER = person("slack", PERSON, ())
MOMENT = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"
HOUR_MS, MIN_MS = 3_600_000, 60_000
HOSTILE = '<script>alert("deadline")</script>'


@pytest.fixture
def timed_app(tmp_path: Path, redis_client: Redis, workspace: str) -> App:
    """The web tests' config, its protected ``scene.name`` escalated after an hour and
    changed for 30 minutes at a time; ``decision.*`` writes too may last a while."""
    path = web_config(tmp_path, workspace)
    text = path.read_text(encoding="utf-8").replace(
        "      protected: true\n",
        "      protected: true\n      revert_after_sec: 1800\n"
        "      approval: {escalate: {after_sec: 3600}}\n",
        1,
    )
    path.write_text(text, encoding="utf-8")
    return build_app(workspace, path, client=redis_client)


@pytest.fixture
def site(timed_app: App) -> Iterator[Site]:
    running = serve_site(timed_app)
    yield running
    running.served.stop()


def proposed(app: App, value: str = "BRB", reason: str = "the group asked") -> Proposal:
    outcome = app.gateway.propose(
        mutation("set", "scene.name", value, actor("agent:assistant"), reason=reason)
    )
    assert isinstance(outcome, Pending), outcome
    return outcome.proposal


def made_earlier(app: App, proposal: Proposal, ago_ms: int, expires_in_ms: int) -> None:
    """The proposal as if made ``ago_ms`` ago, due ``expires_in_ms`` from now (negative:
    past), in its key (whose expiry is kept) and in the index the sweep reads."""
    now = server_ms(app.redis, app.store.keys.versions)
    moved = proposal.model_copy(
        update={"created_at": now - ago_ms, "expires_at": now + expires_in_ms}
    )
    app.redis.set(
        app.store.keys.proposal(proposal.id), moved.model_dump_json(by_alias=True), keepttl=True
    )
    app.redis.zadd(app.store.keys.proposals, {proposal.id: now + expires_in_ms}, xx=True)


def page_of(site: Site, path: str) -> str:
    with signed_in(site, person_in(site.app.store.workspace, MEMBER)) as member:
        answer = member.get(f"/w/{site.app.store.workspace}/{path}")
    assert answer.status_code == 200
    return answer.text


def card(page: str, proposal_id: str) -> str:
    start = page.index(f'data-proposal="{proposal_id}"')
    return page[start : page.index("</article>", start)]


def test_a_pending_proposal_shows_its_expiry_escalation_and_how_long_it_lasts(
    site: Site,
) -> None:
    p = proposed(site.app, reason=HOSTILE)
    shown = card(page_of(site, "inbox"), p.id)
    assert re.search(rf'<li class="expiry">Expires at {MOMENT} \(in 24 h\)\.</li>', shown)
    assert re.search(rf'<li class="escalation">Escalates at {MOMENT} \(in 1 h\)\.</li>', shown)
    assert '<li class="revert">Reverts by itself 30m after it is applied.</li>' in shown
    # the reason beside them is text
    assert HOSTILE not in shown and "&lt;script&gt;alert(&#34;deadline&#34;)" in shown


def test_past_deadlines_show_as_past_and_an_escalation_when_it_was_made(site: Site) -> None:
    late, escalated = proposed(site.app), proposed(site.app, "Ending")
    made_earlier(site.app, late, 2 * HOUR_MS, -3 * MIN_MS)  # not swept yet
    made_earlier(site.app, escalated, HOUR_MS + 5 * MIN_MS, 20 * HOUR_MS)
    now = server_ms(site.app.redis, site.app.store.keys.versions)
    Escalations(site.app, {}).run(now_ms=now - 2 * MIN_MS)  # as the sweep two minutes ago
    page = page_of(site, "inbox")
    shown = card(page, late.id)
    assert re.search(rf"Expired at {MOMENT} \(3 min ago\)\.", shown), shown
    # when it was made too: to the second, and how long ago by the server's clock
    made = site.app.gateway.proposals.get(late.id)
    assert made is not None
    at = datetime.fromtimestamp(made.created_at / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert re.search(rf"agent:assistant</span>,\s+{re.escape(at)} \(2 h ago\)\.", shown), shown
    assert "scalat" not in shown  # past its deadline before anyone posted it: never will be
    assert re.search(rf"Escalated at {MOMENT} \(2 min ago\)\.", card(page, escalated.id))
    assert site.app.gateway.expire_due() == 1
    [row] = [r for r in page_of(site, "inbox").split("<tr>") if late.summary() in r]
    assert re.search(rf'<span class="expiry">Expired at {MOMENT} \(3 min ago\)</span>', row)


def test_a_timed_change_shows_when_it_reverts_then_that_it_reverted(site: Site) -> None:
    app = site.app
    app.gateway.propose(mutation("set", "scene.name", "Live", "moderator:sam"))
    p = proposed(app, reason=HOSTILE)
    done = app.gateway.apply_proposal(p.id, actor(f"moderator:{MOD}"), revision=0)
    assert isinstance(done, Committed) and done.reverts_at is not None
    by = f"revert-{done.mutation.id}"
    [row] = [r for r in page_of(site, "inbox").split("<tr>") if "set scene.name = BRB" in r]
    assert re.search(rf'<span class="revert">Reverts at {MOMENT} \(in 30 min\) by {by}</span>', row)
    state = page_of(site, "state")
    assert re.search(rf"Reverts at {MOMENT} \(in 30 min\) by {by}</span>", state)

    with signed_in(site, person_in(app.store.workspace, MEMBER)) as member:
        trace = member.get(f"/w/{app.store.workspace}/trace/{p.id}").text
    assert re.search(rf'<li class="revert">Reverts at {MOMENT} \(in 30 min\) by {by}\.</li>', trace)
    assert re.search(
        rf"Now: <span class=\"mono\">scene.name \(mutation {done.mutation.id}\): "
        rf"reverts at {MOMENT} \(in 30 min\) by {by}</span>",
        trace,
    )
    assert HOSTILE not in trace  # the reason, in the records, is text

    assert revert_due(app.gateway, now_ms=done.reverts_at) == 1
    row = next(r for r in page_of(site, "inbox").split("<tr>") if "set scene.name = BRB" in r)
    assert re.search(rf'<span class="revert">Reverted at {MOMENT} \(.+\) by {by}</span>', row)
    state = page_of(site, "state")
    assert "Reverts at" not in state and "Revert due" not in state
    assert re.search(rf'<span class="reverted">Reverted at {MOMENT} \(.+\) by {by}</span>', state)
    entry = app.store.get("scene.name")
    assert entry is not None and entry.value == "Live"


def test_a_key_a_timed_revert_deleted_is_listed_as_reverted(site: Site) -> None:
    app = site.app
    done = app.gateway.propose(mutation("set", "decision.db", "mysql", "user:al", for_sec=600))
    assert isinstance(done, Committed) and done.reverts_at is not None
    assert re.search(rf"Reverts at {MOMENT} \(in 10 min\)", page_of(site, "state"))
    assert revert_due(app.gateway, now_ms=done.reverts_at) == 1
    state = page_of(site, "state")
    assert "<h2>Deleted by a timed revert</h2>" in state
    [row] = [r for r in state.split("<tr>") if "decision.db" in r]
    assert re.search(rf"Reverted at {MOMENT} \(.+\) by revert-{done.mutation.id}", row)
    assert f"not set before the change {done.mutation.id}" in row


def test_in_a_browser_the_inbox_and_the_state_page_show_the_deadlines(site: Site) -> None:
    app = site.app
    p = proposed(app, reason=HOSTILE)
    timed = app.gateway.propose(mutation("set", "decision.db", "pg", "user:al", for_sec=1800))
    assert isinstance(timed, Committed)
    with signed_in(site, person_in(app.store.workspace, MEMBER)) as member:
        cookie = member.cookies.get("deliberate")
    assert cookie is not None
    with chromium() as browser:
        context = browser.new_context()
        context.add_cookies([{"name": "deliberate", "value": cookie, "url": site.base}])
        page = context.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{site.base}/w/{app.store.workspace}/inbox")
        shown = page.locator(f"[data-proposal='{p.id}'] ul.deadlines")
        expect(shown.locator("li.expiry")).to_have_text(
            re.compile(rf"^Expires at {MOMENT} \(in 24 h\)\.$")
        )
        expect(shown.locator("li.escalation")).to_have_text(
            re.compile(r"^Escalates at .+ \(in 1 h\)\.$")
        )
        expect(page.locator(f"[data-proposal='{p.id}']")).to_contain_text(HOSTILE)  # as text
        page.goto(f"{site.base}/w/{app.store.workspace}/state")
        row = page.locator("tr", has_text="decision.db")
        expect(row.locator("td.timed")).to_contain_text(
            re.compile(rf"Reverts at {MOMENT} \(in 30 min\) by revert-{timed.mutation.id}")
        )
        context.close()
    assert dialogs == []  # the reason never ran
    found = app.gateway.proposals.get(p.id)
    assert found is not None and found.status is ProposalStatus.PENDING
