"""Reject in the Inbox takes the right to apply, over real HTTP: the model's proposal of
``scene.name`` (protected) offers Reject to a moderator and not to a member (who is told
why); a member's or a guest's POST is refused all the same and nothing changes."""

from __future__ import annotations

import re

from bot.chat.people import person
from core.gateway.outcome import ProposalStatus
from tests.bot.web.conftest import MOD, PERSON, Site
from tests.bot.web.test_inbox import act, client_of, proposed, status

MODERATOR = person("slack", MOD, ("moderator",))
MEMBER = person("slack", PERSON, ())
GUEST = person("slack", "U0GUEST", (), guest=True)
REFUSED = (
    "scene.name is protected: only a moderator or an admin may discard a proposal to change "
    "it; nothing was changed"
)


def reject_forms(page: str) -> list[str]:
    return re.findall(r'action="[^"]*/inbox/([^/"]+)/reject"', page)


def test_reject_is_offered_only_to_whoever_may_discard(site: Site) -> None:
    pid = proposed(site.app)
    inbox = f"/w/{site.app.store.workspace}/inbox"
    with client_of(site, MODERATOR) as mod:
        assert reject_forms(mod.get(inbox).text) == [pid]
    with client_of(site, MEMBER) as member:
        page = member.get(inbox).text
    assert reject_forms(page) == []
    assert (
        "Reject is not yours to click: scene.name is protected: only a moderator or an admin "
        "may discard a proposal to change it." in page
    )


def test_a_members_or_guests_reject_is_refused_and_nothing_changes(site: Site) -> None:
    pid = proposed(site.app)
    with client_of(site, MEMBER) as member:
        page = act(member, site, pid, "reject", reason="not now")
    assert f"Not done: {REFUSED}" in page
    with client_of(site, GUEST) as guest:
        page = act(guest, site, pid, "reject", reason="not now")
    assert "Not done: guest:U0GUEST is a guest here: guests may talk, not discard" in page
    found = site.app.gateway.proposals.get(pid)
    assert found is not None and found.status is ProposalStatus.PENDING
    assert found.reason is None and found.resolved_by is None
    with client_of(site, MODERATOR) as mod:
        act(mod, site, pid, "reject", reason="we stay live")
    assert status(site.app, pid) is ProposalStatus.DISCARDED
