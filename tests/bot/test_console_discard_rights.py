"""Discard in the console takes the right to apply: ``/reject`` by a member on a protected
proposal a moderator approved is refused for them alone, in words they can act on, and the
approval stands; a moderator's discards it. Under four eyes the asker may withdraw their own
request. Real Redis, the offline loop; proposals come from a person's own write on a key
whose policy says ``approval: {people: true}``."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from redis import Redis

from bot.app import App, build_app
from bot.console import Console
from core.gateway.outcome import ProposalStatus
from tests.conftest import write_config
from tests.factories import actor

IDEA = "how about postgres with read replicas"
KEY = "decision.postgres-read-replicas"


def decisions_config(tmp_path: Path, settings: str) -> Path:
    """The shipped config, with ``settings`` (YAML lines) on the ``decision.*`` rule."""
    text = files("core.config").joinpath("default.yaml").read_text(encoding="utf-8")
    rule = '    - pattern: "decision.*"\n'
    assert text.count(rule) == 1
    return write_config(tmp_path, text.replace(rule, rule + settings))


def console(app: App, who: str) -> tuple[Console, list[str], dict[str, int]]:
    """``who``'s console on session s1, having shown what is on the table: its buttons."""
    said: list[str] = []
    person = Console(app.runtime(use_env=False), "s1", actor(who), said.append)
    person.handle("/show")
    return person, said, {b.action: person.numbers.of(b) for b in person.buttons}


def asks_for(app: App, who: str) -> str:
    """``who`` says the idea and clicks "Use this": their write waits as a proposal."""
    person, said, _ = console(app, who)
    person.handle(IDEA)
    use = {b.action: person.numbers.of(b) for b in person.buttons}["ConfirmCurrent"]
    person.handle(str(use))
    assert said[-1].startswith(
        f"assistant: Proposed: set {KEY} = {IDEA.removeprefix('how about ')}"
    )
    [proposal] = app.gateway.proposals.listed()
    return proposal.id


def test_a_member_cannot_reject_what_a_moderator_approved(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    path = decisions_config(
        tmp_path, "      protected: true\n      approval: {people: true, quorum: 2}\n"
    )
    app = build_app(workspace, path, client=redis_client)
    pid = asks_for(app, "moderator:mo")
    mo, said_mo, shown = console(app, "moderator:mo")
    mo.handle(f"/click {shown['ApplyProposal']} yes")
    assert "approved by moderator:mo (1 of 2)" in said_mo[-1]
    al, said_al, shown = console(app, "user:al")
    al.handle(f"/reject {shown['DiscardProposal']} I'd rather not")
    assert said_al[-1] == (
        f"  (only you) Not done: {KEY} is protected: only a moderator or an admin may discard "
        "a proposal to change it; nothing was changed"
    )
    waiting = app.gateway.proposals.get(pid)
    assert waiting is not None and waiting.status is ProposalStatus.PENDING
    assert [str(a.by) for a in waiting.approvals] == ["moderator:mo"]
    assert waiting.reason is None and app.store.version(KEY) == 0
    working = app.runtime(use_env=False).sessions.load("s1").working
    assert working.rejected_ideas == []  # a refused reason teaches the model nothing
    mx, said_mx, shown = console(app, "moderator:max")
    mx.handle(f"/reject {shown['DiscardProposal']} we stay on mysql")
    assert said_mx[-1].startswith(f"assistant: Discarded proposal: set {KEY}")
    done = app.gateway.proposals.get(pid)
    assert done is not None and done.status is ProposalStatus.DISCARDED
    assert done.reason == "we stay on mysql" and str(done.resolved_by) == "moderator:max"


def test_under_four_eyes_the_asker_withdraws_their_own_request(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    path = decisions_config(tmp_path, "      approval: {people: true, four_eyes: true}\n")
    app = build_app(workspace, path, client=redis_client)
    pid = asks_for(app, "user:alice")
    alice, said, shown = console(app, "user:alice")
    alice.handle(str(shown["ApplyProposal"]))
    assert "user:alice asked for this change: someone else must approve it" in said[-1]
    alice.handle(f"/reject {shown['DiscardProposal']} asked too soon")
    assert said[-1].startswith(f"assistant: Discarded proposal: set {KEY}")
    withdrawn = app.gateway.proposals.get(pid)
    assert withdrawn is not None and withdrawn.status is ProposalStatus.DISCARDED
    assert str(withdrawn.resolved_by) == "user:alice" and app.store.version(KEY) == 0
