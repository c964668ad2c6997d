"""Break glass in the Inbox over real HTTP: ``scene.name`` (protected) needs two approvals,
and its approval names ``break_glass: {role: oncall}``. A moderator holding oncall sees a
"Break glass" form on each pending proposal and applies it at once with a reason; the
"resolved lately" list marks it. The attacks: no reason, no role (a moderator without
oncall, a member), the operator token, a forged or another session's CSRF token, and a
revision edited since the page was shown: each refused, and nothing changes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bot.app import build_app
from bot.chat.people import person
from bot.web.inbox import NO_REASON
from bot.web.people import SignedIn
from core.gateway.break_glass import BreakGlass
from core.gateway.outcome import ProposalStatus
from core.redis.client import RedisClient
from core.state.actor import Actor
from tests.bot.web.conftest import (
    MOD,
    PERSON,
    PROTECTED_SCENE,
    Site,
    serve_site,
    web_config,
)
from tests.bot.web.sessions import csrf_of, person_in, signed_in
from tests.bot.web.test_inbox import act, client_of, proposed, status

ONCALL = person("slack", "U0INA", ("moderator", "oncall"))
MODERATOR = person("slack", MOD, ("moderator",))
MEMBER = person("slack", PERSON, ())
GLASS = "      approval: {quorum: 2, break_glass: {role: oncall}}\n"


@pytest.fixture
def site(tmp_path: Path, redis_client: RedisClient, workspace: str) -> Iterator[Site]:
    path = web_config(tmp_path, workspace)
    text = path.read_text(encoding="utf-8")
    assert text.count(PROTECTED_SCENE) == 1
    text = text.replace(PROTECTED_SCENE, PROTECTED_SCENE + GLASS)
    path.write_text(text, encoding="utf-8")
    running = serve_site(build_app(workspace, path, client=redis_client))
    yield running
    running.served.stop()


def glass_forms(page: str) -> list[str]:
    return re.findall(r'action="[^"]*/inbox/([^/"]+)/breakglass"', page)


def inbox(site: Site) -> str:
    return f"/w/{site.app.store.workspace}/inbox"


def test_offered_only_to_the_role_and_it_applies_at_once(site: Site) -> None:
    pid = proposed(site.app)
    with client_of(site, MODERATOR) as mod:
        assert glass_forms(mod.get(inbox(site)).text) == []
    with client_of(site, MEMBER) as member:
        assert glass_forms(member.get(inbox(site)).text) == []
    with client_of(site, ONCALL) as ina:
        assert glass_forms(ina.get(inbox(site)).text) == [pid]
        page = act(ina, site, pid, "breakglass", reason="  stream   is stuck on BRB ")
    flashed = re.findall(r"Break-glass apply\. Committed: set scene\.name[^<]*", page)
    assert flashed == [
        "Break-glass apply. Committed: set scene.name &#34;BRB&#34; (v1); reason: stream is "
        "stuck on BRB"
    ]
    found = site.app.gateway.proposals.get(pid)
    assert found is not None and found.status is ProposalStatus.APPLIED
    assert found.break_glass == "stream is stuck on BRB" and found.approvals == []
    [record] = site.app.log.latest(5)
    assert record.mutation.meta["breakGlass"] == {
        "by": "moderator:U0INA",
        "reason": "stream is stuck on BRB",
    }
    # "resolved lately" marks it, with its reason; no form is left on it
    resolved = page.split("Lately resolved", 1)[1]
    assert 'class="badge break-glass">break-glass' in resolved
    assert "stream is stuck on BRB" in resolved and glass_forms(page) == []
    [listed] = BreakGlass(site.app.gateway).listed()
    assert listed["proposal"] == pid


@pytest.mark.parametrize("reason", ["", "   ", "\u200b\u3164"])  # (invisible)
def test_without_a_reason_nothing_changes(site: Site, reason: str) -> None:
    pid = proposed(site.app)
    with client_of(site, ONCALL) as ina:
        page = act(ina, site, pid, "breakglass", reason=reason)
        missing = act(ina, site, pid, "breakglass")  # no reason field at all
    assert NO_REASON["breakglass"] in page and NO_REASON["breakglass"] in missing
    assert status(site.app, pid) is ProposalStatus.PENDING and len(site.app.log) == 0


@pytest.mark.parametrize("who", [MODERATOR, MEMBER])
def test_without_the_role_a_post_is_refused_and_nothing_changes(site: Site, who: Actor) -> None:
    pid = proposed(site.app)
    with client_of(site, who) as other:
        page = act(other, site, pid, "breakglass", reason="trust me")
    assert "does not hold the oncall role: only it may break the glass on scene.name" in page
    assert status(site.app, pid) is ProposalStatus.PENDING and len(site.app.log) == 0
    assert BreakGlass(site.app.gateway).listed(reviewed=True) == []


def test_the_operator_never_sees_it_nor_may_post_it(site: Site) -> None:
    pid = proposed(site.app)
    url = f"{inbox(site)}/{pid}/breakglass"
    with signed_in(site, SignedIn.operator()) as operator:
        assert glass_forms(operator.get(inbox(site)).text) == []
        token = csrf_of(operator, f"/w/{site.app.store.workspace}/state")
        form = {"csrf_token": token, "revision": "0", "reason": "operator says"}
        assert operator.post(url, data=form).status_code == 403
    assert status(site.app, pid) is ProposalStatus.PENDING and len(site.app.log) == 0


def test_a_forged_or_foreign_csrf_token_is_refused(site: Site) -> None:
    pid = proposed(site.app)
    url = f"{site.base}{inbox(site)}/{pid}/breakglass"
    form = {"revision": "0", "reason": "outage"}
    assert httpx.post(url, data=form).status_code == 401  # no session
    with signed_in(site, person_in(site.app.store.workspace, ONCALL)) as other:
        stolen = csrf_of(other, inbox(site))
    with client_of(site, ONCALL) as ina:
        assert ina.post(url, data=form).status_code == 400  # no CSRF token
        forged = {**form, "csrf_token": "forged-token"}
        assert ina.post(url, data=forged).status_code == 400
        foreign = {**form, "csrf_token": stolen}  # another session's token
        assert ina.post(url, data=foreign).status_code == 400
    assert status(site.app, pid) is ProposalStatus.PENDING and len(site.app.log) == 0


def test_a_revision_edited_since_the_page_was_shown_is_refused(site: Site) -> None:
    pid = proposed(site.app)
    with client_of(site, MODERATOR) as mod:  # an edit: one approval of two, revision 1
        edited = act(mod, site, pid, "edit", value="Ending")
    assert status(site.app, pid) is ProposalStatus.PENDING, edited
    with client_of(site, ONCALL) as ina:
        page = act(ina, site, pid, "breakglass", reason="outage", revision="0")
    assert "this proposal was edited by" in page and "since you saw it" in page
    found = site.app.gateway.proposals.get(pid)
    assert found is not None and found.status is ProposalStatus.PENDING
    assert found.break_glass is None and len(site.app.log) == 0
