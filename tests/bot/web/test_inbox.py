"""The Inbox over real HTTP: the model's proposal of ``scene.name`` (protected: a moderator
applies it) waits; a moderator applies, edits or rejects it through the gateway, with its
roles, schema, revision and idempotency; anyone else is refused and nothing changes."""

from __future__ import annotations

import httpx
import pytest

from bot.app import App
from bot.chat.people import person
from bot.web.people import SignedIn
from core.gateway.outcome import Pending, ProposalStatus
from core.state.actor import Actor
from tests.bot.web.conftest import MOD, PERSON, Site
from tests.bot.web.sessions import csrf_of, person_in, signed_in
from tests.factories import actor, mutation

MODERATOR = person("slack", MOD, ("moderator",))
MEMBER = person("slack", PERSON, ())


def proposed(app: App, value: str = "BRB", reason: str = "the group asked") -> str:
    """The model proposes ``scene.name = value``: the proposal's id."""
    outcome = app.gateway.propose(
        mutation("set", "scene.name", value, actor("agent:assistant"), reason=reason)
    )
    assert isinstance(outcome, Pending), outcome
    return outcome.proposal.id


def client_of(site: Site, who: Actor) -> httpx.Client:
    return signed_in(site, person_in(site.app.store.workspace, who))


def act(client: httpx.Client, site: Site, proposal_id: str, verb: str, **form: str) -> str:
    """Click ``verb`` as the page offers it: the flashed answer on the page it returns to."""
    inbox = f"/w/{site.app.store.workspace}/inbox"
    fields = {"csrf_token": csrf_of(client, inbox), **form}
    if "revision" not in fields and verb != "reject":
        found = site.app.gateway.proposals.get(proposal_id)
        fields["revision"] = str(found.revision if found else 0)
    answer = client.post(f"{inbox}/{proposal_id}/{verb}", data=fields)
    assert answer.status_code == 303, (answer.status_code, answer.text[:300])
    page = client.get(inbox)
    assert page.status_code == 200
    return page.text


def status(app: App, proposal_id: str) -> ProposalStatus:
    found = app.gateway.proposals.get(proposal_id)
    assert found is not None
    return found.status


def test_the_pending_proposal_shows_with_deadline_approvals_and_quorum(site: Site) -> None:
    pid = proposed(site.app)
    with client_of(site, MEMBER) as member:
        page = member.get(f"/w/{site.app.store.workspace}/inbox").text
    assert f'data-proposal="{pid}"' in page
    assert "set scene.name = BRB" in page and "agent:assistant" in page
    assert "approvals 0 of 1" in page and "Expires at 20" in page and "(in 24 h)" in page
    assert "the group asked" in page
    assert "awaits 1 more approval by a moderator or admin" in page


def test_a_moderator_applies_and_a_second_click_commits_nothing_more(site: Site) -> None:
    pid = proposed(site.app)
    with client_of(site, MODERATOR) as mod:
        page = act(mod, site, pid, "apply")
        assert "Committed: set scene.name" in page
        again = act(mod, site, pid, "apply")
    assert status(site.app, pid) is ProposalStatus.APPLIED
    assert "(v1) (already committed)" in again
    [record] = site.app.log.latest(5)
    assert record.mutation.value == "BRB" and record.mutation.actor.identity == f"slack:{MOD}"
    assert site.app.store.version("scene.name") == 1


def test_a_member_without_the_role_is_refused_and_nothing_changes(site: Site) -> None:
    pid = proposed(site.app)
    with client_of(site, MEMBER) as member:
        page = act(member, site, pid, "apply")
    assert "scene.name is protected: only a moderator or an admin may change it" in page
    assert status(site.app, pid) is ProposalStatus.PENDING
    assert site.app.store.version("scene.name") == 0 and len(site.app.log) == 0


def test_edit_then_apply_commits_the_edited_value_and_a_bad_one_changes_nothing(
    site: Site,
) -> None:
    pid = proposed(site.app)
    with client_of(site, MODERATOR) as mod:
        refused = act(mod, site, pid, "edit", value="Lunch")
        assert "Lunch" in refused and status(site.app, pid) is ProposalStatus.PENDING
        assert site.app.store.version("scene.name") == 0
        page = act(mod, site, pid, "edit", value="Ending")
    assert "Committed: set scene.name" in page
    [record] = site.app.log.latest(5)
    assert record.mutation.value == "Ending"
    assert record.mutation.meta["proposedValue"] == "BRB"


def test_an_apply_of_a_revision_edited_since_is_refused(site: Site) -> None:
    pid = proposed(site.app)
    with client_of(site, MODERATOR) as mod:
        page = act(mod, site, pid, "apply", revision="7")
    assert status(site.app, pid) is ProposalStatus.PENDING and len(site.app.log) == 0
    assert (
        "this proposal was edited since you saw it: it now reads set scene.name = BRB; "
        "nothing was changed"
    ) in page


def test_reject_keeps_the_reason_and_an_empty_one_changes_nothing(site: Site) -> None:
    pid = proposed(site.app)
    with client_of(site, MODERATOR) as mod:
        empty = act(mod, site, pid, "reject", reason="   ")
        assert "Say why it is rejected" in empty
        assert status(site.app, pid) is ProposalStatus.PENDING
        page = act(mod, site, pid, "reject", reason="we stay live")
    found = site.app.gateway.proposals.get(pid)
    assert found is not None and found.status is ProposalStatus.DISCARDED
    assert found.reason == "we stay live" and "we stay live" in page


def test_an_unknown_proposal_is_named_and_nothing_changes(site: Site) -> None:
    with client_of(site, MODERATOR) as mod:
        page = act(mod, site, "01NOSUCHPROPOSAL", "apply", revision="0")
    assert "01NOSUCHPROPOSAL" in page and "nothing was changed" in page


def test_without_a_session_or_csrf_token_or_as_operator_nothing_changes(site: Site) -> None:
    pid = proposed(site.app)
    url = f"{site.base}/w/{site.app.store.workspace}/inbox/{pid}/apply"
    assert httpx.post(url, data={"revision": "0"}).status_code == 401
    with client_of(site, MODERATOR) as mod:
        assert mod.post(url, data={"revision": "0"}).status_code == 400  # no CSRF token
    with signed_in(site, person_in(site.app.store.workspace, MODERATOR)) as other:
        other.get(f"/w/{site.app.store.workspace}/inbox")
        stolen = csrf_of(other, f"/w/{site.app.store.workspace}/inbox")
    with client_of(site, MODERATOR) as mod:  # another session's token does not count
        assert mod.post(url, data={"revision": "0", "csrf_token": stolen}).status_code == 400
    with signed_in(site, SignedIn.operator()) as operator:
        token = csrf_of(operator, f"/w/{site.app.store.workspace}/inbox")
        assert operator.post(url, data={"revision": "0", "csrf_token": token}).status_code == 403
    assert status(site.app, pid) is ProposalStatus.PENDING and len(site.app.log) == 0


def test_a_person_of_another_workspace_sees_no_such_workspace(site: Site) -> None:
    pid = proposed(site.app)
    stranger = signed_in(site, person_in("elsewhere", MODERATOR))
    with stranger:
        inbox = f"/w/{site.app.store.workspace}/inbox"
        assert stranger.get(inbox).status_code == 404
        token = csrf_of(stranger, "/w/elsewhere/state")
        answer = stranger.post(f"{inbox}/{pid}/apply", data={"csrf_token": token, "revision": "0"})
        assert answer.status_code == 404
    assert status(site.app, pid) is ProposalStatus.PENDING


@pytest.mark.parametrize("hostile", ['<script>alert("x")</script>', '"><img src=x onerror=1>'])
def test_a_hostile_reason_is_shown_as_text(site: Site, hostile: str) -> None:
    proposed(site.app, reason=hostile)
    with client_of(site, MEMBER) as member:
        page = member.get(f"/w/{site.app.store.workspace}/inbox").text
    assert hostile not in page and "&lt;" in page
