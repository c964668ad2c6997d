"""Four eyes and quorum under a race, at the gateway: a member's Edit and Apply of someone
else's request at the same moment, approvals against approvals under a quorum, a denial
against an approval; hundreds of rounds, each two (or more) threads let go at one barrier.
What is asserted is the invariant, never a timing: nothing commits with its editor or its
requester among its approvers, a quorum of N is N distinct people, and a denial and an
approval never both win.

The first race is the reproduction of issue 41: an Apply that names no revision, sent with
an Edit, committed the member's own edit with ``editedBy`` and ``approvedBy`` the same person
(6 of 60 tries on the release it was found on)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from core.gateway.break_glass import BreakGlass
from core.gateway.edits import Edit
from core.gateway.outcome import Pending, Proposal, ProposalStatus
from core.state.commit_result import Committed, Rejected
from tests.conftest import write_config
from tests.factories import actor, mutation
from tests.racing import Racer, four_eyes_broken, racer

CONFIG = """
policy:
  proposals: {expire_after_sec: 86400}
  break_glass: {role: oncall}
  keys:
    - pattern: "eyes.*"
      type: string
      approval: {people: true, four_eyes: true}
    - pattern: "pair.*"
      type: string
      approval: {people: true, four_eyes: true, quorum: 2}
    - pattern: "deny.*"
      type: string
      approval: {people: true}
    - pattern: "votes.*"
      type: string
      approval: {people: true, quorum: 2, deny_at: 2}
"""

ROUNDS = 200  # "hundreds of times on every path" (issue 41)
AL, BO, CY, DI = (actor(f"user:{n}") for n in ("al", "bo", "cy", "di"))
INA = actor("user:ina", "oncall")


@pytest.fixture
def app(tmp_path: Path, redis_client: Redis, workspace: str) -> App:
    return build_app(workspace, write_config(tmp_path, CONFIG), client=redis_client)


@pytest.fixture
def race() -> Iterator[Racer]:
    with racer(4) as running:
        yield running


def asked(app: App, key: str, by: str = "user:al") -> Proposal:
    """``by``'s own write of ``key``, waiting for someone else's approval."""
    waiting = app.gateway.propose(mutation("set", key, "asked", by))
    assert isinstance(waiting, Pending), waiting
    return waiting.proposal


def broken(app: App, key: str, quorum: int = 1) -> list[str]:
    """What the commits of ``key`` did against four eyes and the quorum."""
    said = []
    for record in app.log.latest(10, key=key):
        wrong = four_eyes_broken(record.mutation.meta, record.mutation.actor, quorum)
        if wrong is not None:
            said.append(f"{key}: {wrong}")
    return said


def test_an_edit_and_an_apply_naming_no_revision_never_approve_their_own_edit(
    app: App, race: Racer
) -> None:
    """Bo edits Al's request (revision 0) and, at the same moment, applies it naming no
    revision. Whichever comes first, Bo never approves a value Bo asked for."""
    wrong: list[str] = []
    for n in range(ROUNDS):
        p = asked(app, f"eyes.n{n}")
        race.at_once(
            lambda p=p: app.gateway.apply_proposal(p.id, BO, edit=Edit("mine"), revision=0),
            lambda p=p: app.gateway.apply_proposal(p.id, BO, revision=None),
        )
        wrong += broken(app, f"eyes.n{n}")
    assert wrong == [], f"{len(wrong)} of {ROUNDS} rounds broke four eyes: {wrong[:3]}"


def test_an_edit_and_an_apply_of_the_revision_seen_never_approve_their_own_edit(
    app: App, race: Racer
) -> None:
    """The same, the Apply naming the revision Bo saw (0): either it applies Al's value as
    asked (and the edit is refused), or the edit wins (and the Apply is refused as edited
    since): never both, never Bo's value."""
    wrong: list[str] = []
    for n in range(ROUNDS):
        key = f"eyes.r{n}"
        p = asked(app, key)
        edit, apply = race.at_once(
            lambda p=p: app.gateway.apply_proposal(p.id, BO, edit=Edit("mine"), revision=0),
            lambda p=p: app.gateway.apply_proposal(p.id, BO, revision=0),
        )
        wrong += broken(app, key)
        entry, kept = app.store.get(key), app.gateway.proposals.get(p.id)
        assert kept is not None
        if isinstance(apply, Committed) and not apply.duplicate:
            assert entry is not None and entry.value == "asked", n
            assert isinstance(edit, Rejected) or (isinstance(edit, Committed) and edit.duplicate), (
                n
            )  # (told what committed)
            assert kept.edited is None, n
        else:
            assert isinstance(apply, Rejected) and entry is None, (n, apply)
            assert isinstance(edit, Pending) and kept.status is ProposalStatus.PENDING, n
            assert kept.approvals == [] and kept.current_value == "mine", n
    assert wrong == [], wrong[:3]


def test_approvals_racing_under_a_quorum_count_distinct_people_other_than_the_asker(
    app: App, race: Racer
) -> None:
    """Al asked; Bo and Cy approve, Al approves too and Di edits, all at once: it commits
    only with two distinct approvers, neither Al nor whoever edited it."""
    wrong: list[str] = []
    for n in range(ROUNDS):
        key = f"pair.n{n}"
        p = asked(app, key)
        race.at_once(
            lambda p=p: app.gateway.apply_proposal(p.id, BO, revision=0),
            lambda p=p: app.gateway.apply_proposal(p.id, CY, revision=0),
            lambda p=p: app.gateway.apply_proposal(p.id, AL, revision=0),
            lambda p=p: app.gateway.apply_proposal(p.id, DI, edit=Edit("di's"), revision=0),
        )
        wrong += broken(app, key, quorum=2)
        records = app.log.latest(10, key=key)
        assert len(records) <= 1, n
        kept = app.gateway.proposals.get(p.id)
        assert kept is not None
        assert (kept.status is ProposalStatus.APPLIED) == (len(records) == 1), n
    assert wrong == [], wrong[:3]


def test_a_denial_and_an_approval_never_both_win(app: App, race: Racer) -> None:
    """Bo discards Al's request while Cy applies it: it ends discarded with nothing
    committed, or applied with one commit and the discard told so."""
    for n in range(ROUNDS):
        key = f"deny.n{n}"
        p = asked(app, key)
        denial, approval = race.at_once(
            lambda p=p: app.gateway.discard_proposal(p.id, BO, "no"),
            lambda p=p: app.gateway.apply_proposal(p.id, CY, revision=0),
        )
        kept = app.gateway.proposals.get(p.id)
        assert kept is not None and isinstance(denial, Proposal), (n, denial)
        committed = len(app.log.latest(10, key=key))
        if kept.status is ProposalStatus.DISCARDED:
            assert committed == 0 and isinstance(approval, Rejected), (n, approval)
            assert denial.status is ProposalStatus.DISCARDED, n
        else:
            assert kept.status is ProposalStatus.APPLIED and committed == 1, (n, kept.status)
            assert isinstance(approval, Committed), (n, approval)
            assert denial.status is ProposalStatus.APPLIED, n


def test_denials_and_approvals_racing_under_a_quorum_never_both_win(app: App, race: Racer) -> None:
    """Two denials end it, two approvals apply it; Bo and Cy deny while Di and Al approve
    (Al having asked: without four eyes, Al may): one side wins, whole."""
    for n in range(ROUNDS):
        key = f"votes.n{n}"
        p = asked(app, key, by="user:eve")
        race.at_once(
            lambda p=p: app.gateway.discard_proposal(p.id, BO, "no"),
            lambda p=p: app.gateway.discard_proposal(p.id, CY, "nor I"),
            lambda p=p: app.gateway.apply_proposal(p.id, DI, revision=0),
            lambda p=p: app.gateway.apply_proposal(p.id, AL, revision=0),
        )
        kept = app.gateway.proposals.get(p.id)
        assert kept is not None
        records = app.log.latest(10, key=key)
        if kept.status is ProposalStatus.DISCARDED:
            assert records == [] and len(kept.denials) == 2, n
        else:
            assert kept.status is ProposalStatus.APPLIED and len(records) == 1, n
            approvers = records[0].mutation.meta["approvedBy"]
            assert sorted(approvers) == ["user:al", "user:di"], (n, approvers)  # type: ignore[arg-type]


def test_breaking_the_glass_against_an_edit_applies_only_the_value_seen(
    app: App, race: Racer
) -> None:
    """Ina breaks the glass on the value she saw (revision 0) while Bo edits it: the glass
    applies Al's value, or the edit wins and the glass is refused as edited since; never
    Bo's value under Ina's reason."""
    glass = BreakGlass(app.gateway)
    for n in range(ROUNDS):
        key = f"eyes.g{n}"
        p = asked(app, key)
        broke, edit = race.at_once(
            lambda p=p: glass.apply(p.id, INA, "outage", 0),
            lambda p=p: app.gateway.apply_proposal(p.id, BO, edit=Edit("mine"), revision=0),
        )
        entry, kept = app.store.get(key), app.gateway.proposals.get(p.id)
        assert kept is not None
        if isinstance(broke, Committed):
            assert entry is not None and entry.value == "asked" and kept.edited is None, n
            assert kept.break_glass == "outage", n
        else:
            assert isinstance(broke, Rejected) and "since you saw it" in broke.message, n
            assert entry is None and isinstance(edit, Pending) and kept.current_value == "mine"
