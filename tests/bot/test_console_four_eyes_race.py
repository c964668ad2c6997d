"""Four eyes in the console under a race: Alice's "Use this" waits for someone else (four
eyes, ``people: true``); Bob, in two consoles on her session, types ``/edit N VALUE`` in one
and clicks Apply in the other (``/click N``, or ``/do ApplyProposal``) at the same moment,
both let go at one barrier, round after round, a session each. Whichever lands first, Bob
never approves a value he asked for. When the edit wins, Carol applies the new value. Real
Redis, the offline loop."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from bot.console import Console
from core.gateway.outcome import ProposalStatus
from tests.conftest import write_config
from tests.factories import actor
from tests.racing import Racer, four_eyes_broken, racer

ROUNDS = 200  # "hundreds of times on every path" (issue 41)


@pytest.fixture
def app(tmp_path: Path, redis_client: Redis, workspace: str) -> App:
    text = files("core.config").joinpath("default.yaml").read_text(encoding="utf-8")
    rule = '    - pattern: "decision.*"\n'
    settings = "      approval: {people: true, four_eyes: true}\n"
    return build_app(workspace, write_config(tmp_path, text.replace(rule, rule + settings)))


@pytest.fixture
def race() -> Iterator[Racer]:
    with racer(2) as running:
        yield running


def console(app: App, session: str, who: str) -> tuple[Console, dict[str, int]]:
    """``who``'s console on ``session``, having shown what is on the table: its buttons."""
    person = Console(app.runtime(use_env=False), session, actor(who), lambda _: None)
    person.handle("/show")
    return person, {b.action: person.numbers.of(b) for b in person.buttons}


def asked(app: App, session: str, n: int) -> str:
    """Alice says an idea and clicks "Use this": her write waits; its proposal's id."""
    alice, _ = console(app, session, "user:alice")
    alice.handle(f"how about postgres with {n} read replicas")  # (a key each round)
    alice.handle(str({b.action: alice.numbers.of(b) for b in alice.buttons}["ConfirmCurrent"]))
    [waiting] = [p for p in app.gateway.proposals.listed() if p.status is ProposalStatus.PENDING]
    return waiting.id


def test_an_edit_and_an_apply_racing_in_the_console_never_approve_their_own_edit(
    app: App, race: Racer
) -> None:
    wins, wrong = {"edit": 0, "apply": 0}, []
    for n in range(ROUNDS):
        session = f"s{n}"
        pid = asked(app, session, n)
        edits, shown = console(app, session, "user:bob")
        applies, _ = console(app, session, "user:bob")
        apply = f"/click {shown['ApplyProposal']}" if n % 2 else "/do ApplyProposal"
        race.at_once(
            lambda edits=edits, n=shown["EditProposal"]: edits.handle(f"/edit {n} mine"),
            lambda applies=applies, apply=apply: applies.handle(apply),
        )
        kept = app.gateway.proposals.get(pid)
        assert kept is not None
        if kept.status is ProposalStatus.PENDING:  # the edit came first: Carol approves it
            assert kept.edited is not None and kept.approvals == [], n
            wins["edit"] += 1
            carol, buttons = console(app, session, "user:carol")
            carol.handle(f"/click {buttons['ApplyProposal']}")
        else:
            assert kept.edited is None, n  # the Apply came first: the value Alice asked for
            wins["apply"] += 1
        assert app.gateway.proposals.get(pid).status is ProposalStatus.APPLIED, n  # type: ignore[union-attr]
        [record] = app.log.latest(2, key=kept.mutation.key)
        wrong.append(four_eyes_broken(record.mutation.meta, record.mutation.actor))
    assert [w for w in wrong if w] == [], wins
