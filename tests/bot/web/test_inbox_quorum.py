"""Approving in the Inbox as a chat Apply click does, over real HTTP: an Apply is one person's
approval, counted towards the proposal's quorum (the first of two says whom it still awaits,
the page shows it, the second commits), and a refusal is shown with why (four eyes: the
person who asked; no role: the key's protection), nothing changed. Real Redis, the real
gateway."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.app import App, build_app
from bot.chat.people import person
from core.gateway.outcome import Pending, Proposal, ProposalStatus
from core.redis.client import RedisClient
from tests.bot.web.conftest import PROTECTED_SCENE, Site, serve_site, web_config
from tests.bot.web.test_inbox import act, client_of
from tests.factories import mutation

PAIR = """\
    - pattern: "pair.*"
      type: string
      approval: {people: true, four_eyes: true, quorum: 2}
"""
ASKER, BEA, CID = (person("slack", who, ()) for who in ("U0REQ", "U0BEA", "U0CID"))


@pytest.fixture
def site(tmp_path: Path, redis_client: RedisClient, workspace: str) -> Iterator[Site]:
    path = web_config(tmp_path, workspace)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(PROTECTED_SCENE, PROTECTED_SCENE + PAIR, 1), encoding="utf-8")
    running = serve_site(build_app(workspace, path, client=redis_client))
    yield running
    running.served.stop()


def asked(app: App, key: str = "pair.db") -> Proposal:
    waiting = app.gateway.propose(mutation("set", key, "postgres", ASKER))
    assert isinstance(waiting, Pending), waiting
    return waiting.proposal


def test_the_first_of_two_approvals_waits_and_the_second_commits(site: Site) -> None:
    p = asked(site.app)
    with client_of(site, BEA) as bea:
        page = act(bea, site, p.id, "apply")
    assert "set pair.db = postgres: approved by user:U0BEA (1 of 2); awaits 1 more approval" in page
    assert "approvals 1 of 2" in page and "Approved so far by" in page
    kept = site.app.gateway.proposals.get(p.id)
    assert kept is not None and kept.status is ProposalStatus.PENDING
    assert [str(a.by) for a in kept.approvals] == ["user:U0BEA"]
    assert site.app.store.version("pair.db") == 0
    with client_of(site, BEA) as bea:  # a second click of hers counts nothing more
        again = act(bea, site, p.id, "apply")
    assert "(1 of 2); awaits 1 more approval" in again
    with client_of(site, CID) as cid:
        page = act(cid, site, p.id, "apply")
    assert "Committed: set pair.db &#34;postgres&#34; (v1)" in page  # (escaped)
    [record] = site.app.log.latest(5)
    assert record.mutation.meta["approvedBy"] == ["user:U0BEA", "user:U0CID"]


def test_the_asker_is_shown_why_their_approval_is_refused(site: Site) -> None:
    p = asked(site.app)
    with client_of(site, ASKER) as asker:
        page = act(asker, site, p.id, "apply")
    assert "Not done: user:U0REQ asked for this change: someone else must approve it" in page
    kept = site.app.gateway.proposals.get(p.id)
    assert kept is not None and kept.approvals == [] and kept.status is ProposalStatus.PENDING
    assert len(site.app.log) == 0


def test_a_member_without_the_role_is_shown_why(site: Site) -> None:
    waiting = site.app.gateway.propose(
        mutation("set", "scene.name", "BRB", "agent:assistant", reason="the group asked")
    )
    assert isinstance(waiting, Pending)
    with client_of(site, BEA) as bea:
        page = act(bea, site, waiting.proposal.id, "apply")
    assert "Not done: scene.name is protected: only a moderator or an admin may change it" in page
    assert site.app.store.version("scene.name") == 0 and len(site.app.log) == 0
