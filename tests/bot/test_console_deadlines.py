"""Deadlines in the console, as a person reads them: a proposal's view says until when it
may be applied and, on a key whose changes last a while, how long; its commit says when the
change reverts; ``/state`` says when a timed key reverts and by which mutation, and after
the revert no longer as timed (a key set for the first time is gone again). Each in UTC
and how far off by the Redis server's clock. Real Redis, the offline loop; the proposal is a
person's own write on a key whose policy says ``approval: {people: true}``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from core.gateway.timed import revert_due
from tests.bot.test_console_lifecycle import IDEA, KEY, approval_config, console, looking

MOMENT = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"


@pytest.fixture
def timed(tmp_path: Path, redis_client: Redis, workspace: str) -> App:
    """A person's "Use this" on a decision waits for one approver, and lasts 30 minutes."""
    path = approval_config(tmp_path, "{people: true}\n      revert_after_sec: 1800")
    return build_app(workspace, path, client=redis_client)


def test_a_proposal_shows_its_deadline_its_commit_when_it_reverts_and_state_follows(
    timed: App,
) -> None:
    alice, said = console(timed, "user:alice")
    alice.handle(IDEA)
    alice.handle("1")  # Use this: it waits
    offer = said[-1].splitlines()
    assert offer[0].startswith("assistant: Proposed: set decision.")
    assert re.fullmatch(
        rf"  expires at {MOMENT} \(in 24 h\); reverts by itself 30m after it is applied",
        offer[-2],
    ), offer

    bob, heard, shown = looking(timed, "user:bob")
    bob.handle(str(shown["ApplyProposal"]))
    done = heard[-1].splitlines()
    assert done[0].startswith("assistant: Committed: set decision.")
    assert re.fullmatch(rf"  reverts at {MOMENT} \(in 30 min\)", done[-2]), done

    bob.handle("/state decision.")
    entry = timed.store.get(KEY)
    assert entry is not None
    made = entry.meta["mutationId"]
    assert re.search(rf"; reverts at {MOMENT} \(in 30 min\) by revert-{made}$", heard[-1])
    [deadline] = timed.store.reverts_at([str(made)]).values()
    assert revert_due(timed.gateway, now_ms=deadline) == 1
    bob.handle("/state decision.")
    assert heard[-1] == "(no state yet)"  # it was not set before: the revert deleted it
