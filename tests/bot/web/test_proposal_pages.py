"""The Inbox and ``/deliberate pending`` read the proposals they show, never all of them (an
attacker's read of issue 41: with 20,000 proposals waiting each read all 20,000, 1.2 s, and
``/deliberate pending`` said "200 waiting"): 2,000 agent proposals made through the gateway,
the proposals each read counted on a counting client (each read names the proposal's key);
the soonest due first, the count from the index, and the last resolved first."""

from __future__ import annotations

from bot.app import App
from bot.chat.answers import MAX_PROPOSALS, answer
from bot.web.inbox import LISTED, RESOLVED_SHOWN
from bot.web.settings import WebSettings
from bot.web.site import create_app
from core.gateway.outcome import Pending, ProposalStatus
from core.state.keys import WorkspaceKeys
from tests.bot.web.conftest import OPERATOR_TOKEN
from tests.factories import actor, mutation
from tests.round_trips import Trips

WAITING = 2_000
BEARER = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
MOD = actor("moderator:mo")


def proposed(app: App, n: int) -> list[str]:
    """``n`` agent proposals of ``scene.name`` (each its own mutation), in order made."""
    made = []
    for i in range(n):
        value = ["Live", "BRB"][i % 2]
        outcome = app.gateway.propose(mutation("set", "scene.name", value, "agent:assistant"))
        assert isinstance(outcome, Pending), outcome
        made.append(outcome.proposal.id)
    return made


def proposals_read(app: App, trips: Trips) -> int:
    return trips.mentions(f"{WorkspaceKeys(app.store.workspace).tag}:proposal:")


def test_2000_proposals_are_read_as_far_as_they_are_shown(counted: tuple[App, Trips]) -> None:
    app, trips = counted
    made = proposed(app, WAITING)
    with trips.counting():
        said = answer(app, "pending", asker="slack:U0ASKER")
    assert proposals_read(app, trips) == MAX_PROPOSALS  # (all 2,000 before)
    assert said.startswith(f"{WAITING} waiting, soonest deadline first:"), said
    assert [made[0] in said, made[MAX_PROPOSALS - 1] in said, made[MAX_PROPOSALS] in said] == [
        True,
        True,
        False,
    ]
    assert said.endswith(
        f"… and {WAITING - MAX_PROPOSALS} more (`deliberate proposals` lists them all)"
    )

    web = create_app(app, WebSettings(operator_token=OPERATOR_TOKEN), env={}).test_client()
    with trips.counting():
        page = web.get(f"/w/{app.store.workspace}/inbox", headers=BEARER)
    assert page.status_code == 200
    assert proposals_read(app, trips) == LISTED  # (and no resolved one is kept)
    assert made[LISTED - 1] in page.text and made[LISTED] not in page.text


def last_first(app: App, ids: list[str]) -> list[str]:
    """``ids`` (resolved proposals) in the order the index keeps them: the last resolved
    first; those resolved in one millisecond (one score) by id, as Redis orders a tie."""
    kept = [app.gateway.proposals.get(pid) for pid in ids]
    at = {p.id: p.resolved_at for p in kept if p is not None and p.resolved_at is not None}
    assert len(at) == len(ids)
    return sorted(ids, key=lambda pid: (-at[pid], pid))


def test_the_last_resolved_are_shown_first_and_gone_ones_leave_the_index(web_app: App) -> None:
    app = web_app
    made = proposed(app, 3 * RESOLVED_SHOWN)
    for pid in made[: 2 * RESOLVED_SHOWN]:
        app.gateway.discard_proposal(pid, MOD, "not now")
    order = last_first(app, made[: 2 * RESOLVED_SHOWN])
    box = app.gateway.proposals
    resolved = box.resolved(RESOLVED_SHOWN)
    assert [p.id for p in resolved] == order[:RESOLVED_SHOWN]
    assert all(p.status is ProposalStatus.DISCARDED for p in resolved)
    assert [p.id for p in box.listed()] == made[2 * RESOLVED_SHOWN :]
    listed = box.listed(resolved=True, limit=RESOLVED_SHOWN + 3)
    assert [p.id for p in listed] == made[2 * RESOLVED_SHOWN :] + order[:3]
    app.redis.delete(app.store.keys.proposal(made[-1]), app.store.keys.proposal(order[0]))
    assert [p.id for p in box.listed(resolved=True, limit=RESOLVED_SHOWN + 3)] == (
        made[2 * RESOLVED_SHOWN : -1] + order[1:5]
    )
    assert app.redis.zscore(app.store.keys.proposals, made[-1]) is None  # (gone: dropped)
    assert box.waiting() == RESOLVED_SHOWN - 1
