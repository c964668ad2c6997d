"""Four eyes in the Inbox under a race, over real HTTP: a member sends Edit and Apply of
someone else's request (``eyes.*``: four eyes, a person's own write waits) at the same moment,
from two tabs (two sessions of theirs), round after round. The reproduction of issue 41 sent
the Apply with no revision (the Inbox took it as "whatever it is now": 14 of 40 tries
committed the member's own edit with ``editedBy`` and ``approvedBy`` the same person); now a
form that names no revision is answered 400 and changes nothing. Asserted: the invariant,
never a timing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bot.app import App, build_app
from bot.chat.people import person
from core.gateway.outcome import Pending, Proposal, ProposalStatus
from core.redis.client import RedisClient
from core.state.actor import Actor
from tests.bot.web.conftest import PERSON, PROTECTED_SCENE, Site, serve_site, web_config
from tests.bot.web.sessions import csrf_of, person_in, signed_in
from tests.factories import mutation
from tests.racing import Racer, four_eyes_broken, racer

MEMBER = person("slack", PERSON, ())
ASKER = person("slack", "U0REQ", ())
EYES = """\
    - pattern: "eyes.*"
      type: string
      approval: {people: true, four_eyes: true}
    - pattern: "pair.*"
      type: string
      approval: {people: true, four_eyes: true, quorum: 2}
    - pattern: "deny.*"
      type: string
      approval: {people: true}
"""
BEA, CID = person("slack", "U0BEA", ()), person("slack", "U0CID", ())
ROUNDS = 40
EDIT_ROUNDS = 200  # Edit against Apply: "hundreds of times on every path" (issue 41)


@pytest.fixture
def site(tmp_path: Path, redis_client: RedisClient, workspace: str) -> Iterator[Site]:
    path = web_config(tmp_path, workspace)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(PROTECTED_SCENE, PROTECTED_SCENE + EYES, 1), encoding="utf-8")
    running = serve_site(build_app(workspace, path, client=redis_client))
    yield running
    running.served.stop()


class Tab:
    """One of a person's tabs (the member's, else ``who``'s): a session of theirs, and the
    token its forms carry."""

    def __init__(self, site: Site, who: Actor = MEMBER) -> None:
        self.inbox = f"/w/{site.app.store.workspace}/inbox"
        self.client = signed_in(site, person_in(site.app.store.workspace, who))
        self.token = csrf_of(self.client, self.inbox)

    def post(self, proposal_id: str, verb: str, **form: str) -> httpx.Response:
        fields = {"csrf_token": self.token, **form}
        return self.client.post(f"{self.inbox}/{proposal_id}/{verb}", data=fields)


@pytest.fixture
def tabs(site: Site) -> Iterator[tuple[Tab, Tab]]:
    first, second = Tab(site), Tab(site)
    yield first, second
    first.client.close()
    second.client.close()


@pytest.fixture
def race() -> Iterator[Racer]:
    with racer(3) as running:
        yield running


def asked(app: App, key: str) -> Proposal:
    """U0REQ's own write of ``key``, waiting for someone else's approval."""
    waiting = app.gateway.propose(mutation("set", key, "asked", ASKER))
    assert isinstance(waiting, Pending), waiting
    return waiting.proposal


def broken(app: App, key: str, quorum: int = 1) -> list[str]:
    said = []
    for record in app.log.latest(10, key=key):
        wrong = four_eyes_broken(record.mutation.meta, record.mutation.actor, quorum)
        said += [] if wrong is None else [f"{key}: {wrong}"]
    return said


def test_an_edit_and_an_apply_naming_no_revision_never_approve_their_own_edit(
    site: Site, tabs: tuple[Tab, Tab], race: Racer
) -> None:
    edits, applies = tabs
    wrong: list[str] = []
    for n in range(EDIT_ROUNDS):
        key = f"eyes.n{n}"
        p = asked(site.app, key)
        answers = race.at_once(
            lambda p=p: edits.post(p.id, "edit", revision="0", value="mine"),
            lambda p=p: applies.post(p.id, "apply"),  # no revision: a form made by hand
        )
        assert all(isinstance(a, httpx.Response) for a in answers), answers
        wrong += broken(site.app, key)
    assert wrong == [], f"{len(wrong)} of {EDIT_ROUNDS} rounds broke four eyes: {wrong[:3]}"


def test_an_edit_and_an_apply_of_the_revision_shown_never_approve_their_own_edit(
    site: Site, tabs: tuple[Tab, Tab], race: Racer
) -> None:
    edits, applies = tabs
    wrong: list[str] = []
    for n in range(EDIT_ROUNDS):
        key = f"eyes.r{n}"
        p = asked(site.app, key)
        edit, apply = race.at_once(
            lambda p=p: edits.post(p.id, "edit", revision="0", value="mine"),
            lambda p=p: applies.post(p.id, "apply", revision="0"),
        )
        assert (edit.status_code, apply.status_code) == (303, 303), n
        wrong += broken(site.app, key)
        kept, entry = site.app.gateway.proposals.get(p.id), site.app.store.get(key)
        assert kept is not None
        if entry is None:  # the edit came first: it waits for someone else, with no approval
            assert kept.status is ProposalStatus.PENDING and kept.approvals == [], n
        else:  # the Apply came first: the value asked for, unedited
            assert entry.value == "asked" and kept.edited is None, n
    assert wrong == [], wrong[:3]


def test_a_form_naming_no_revision_is_answered_400_and_changes_nothing(
    site: Site, tabs: tuple[Tab, Tab]
) -> None:
    tab, _ = tabs
    p = asked(site.app, "eyes.none")
    for verb, form in [
        ("apply", {}),
        ("apply", {"revision": ""}),
        ("apply", {"revision": "-1"}),
        ("apply", {"revision": "1e3"}),
        ("apply", {"revision": "٣"}),  # a digit, not an ASCII one
        ("edit", {"value": "mine"}),
        ("breakglass", {"reason": "outage"}),
    ]:
        answer = tab.post(p.id, verb, **form)
        assert answer.status_code == 400, (verb, form, answer.status_code)
        assert "This form names no revision of the proposal" in answer.text, answer.text[:300]
        assert "Nothing was changed; reload the page" in answer.text
    kept = site.app.gateway.proposals.get(p.id)
    assert kept is not None and kept.status is ProposalStatus.PENDING
    assert kept.approvals == [] and kept.edited is None and len(site.app.log) == 0
    assert tab.post(p.id, "apply", revision="0").status_code == 303  # named: applied
    assert site.app.store.get("eyes.none").value == "asked"  # type: ignore[union-attr]


def test_approvals_racing_under_a_quorum_count_two_people_other_than_the_asker(
    site: Site, race: Racer
) -> None:
    """Two approvals needed, four eyes: the member, Bea and the asker herself click Apply at
    once; it commits only with two distinct approvers, never the asker."""
    tabs = [Tab(site), Tab(site, BEA), Tab(site, ASKER)]
    wrong: list[str] = []
    for n in range(ROUNDS):
        key = f"pair.n{n}"
        p = asked(site.app, key)
        race.at_once(*(lambda t=t, p=p: t.post(p.id, "apply", revision="0") for t in tabs))
        wrong += broken(site.app, key, quorum=2)
        kept = site.app.gateway.proposals.get(p.id)
        assert kept is not None and kept.status is ProposalStatus.APPLIED, (n, kept)
        assert len(site.app.log.latest(10, key=key)) == 1, n
    for tab in tabs:
        tab.client.close()
    assert wrong == [], wrong[:3]


def test_a_rejection_and_an_approval_never_both_win(site: Site, race: Racer) -> None:
    """Bea rejects the asker's write while Cid applies it: discarded with nothing committed,
    or applied once, never both."""
    rejects, applies = Tab(site, BEA), Tab(site, CID)
    for n in range(ROUNDS):
        key = f"deny.n{n}"
        p = asked(site.app, key)
        race.at_once(
            lambda p=p: rejects.post(p.id, "reject", reason="not now"),
            lambda p=p: applies.post(p.id, "apply", revision="0"),
        )
        kept = site.app.gateway.proposals.get(p.id)
        assert kept is not None
        records = site.app.log.latest(10, key=key)
        if kept.status is ProposalStatus.DISCARDED:
            assert records == [] and kept.reason == "not now", n
        else:
            assert kept.status is ProposalStatus.APPLIED and len(records) == 1, (n, kept.status)
            assert kept.reason is None, n
    rejects.client.close()
    applies.client.close()
