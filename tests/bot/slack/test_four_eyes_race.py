"""Four eyes in Slack under a race: the model proposes ``decision.db`` for Alice (four eyes:
she may not approve it); Bob opens its Edit modal, then submits it and clicks Apply at the
same moment (two signed requests let go at one barrier), round after round, each round in a
thread of its own. Whichever lands first, Bob never approves a value he asked for: nothing
commits with ``editedBy`` among its approvers. When the edit wins, Carol applies the new
value from the button the next release renders (revision 1). Real Bolt, the local Slack
API, real Redis, the model proposing through its tool (the local OpenAI-protocol server).

A button carries the revision it was shown for (``v``), as the previous release's buttons
already did: one clicked after an edit is refused, saying so, and changes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from core.gateway.outcome import ProposalStatus
from tests.bot.slack.conftest import team_tenants
from tests.bot.slack.rig import CHANNEL, SlackBot, button, mention
from tests.bot.slack.test_break_glass import proposing_bot
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.racing import Racer, four_eyes_broken, racer
from tests.servers.slack_api import SlackServer
from tests.team_config import team_config

KEY = "decision.db"
ALICE, BOB, CAROL = "U0ALICE", "U0BOB", "U0CAROL"
EYES = f"""\
  keys:
    - pattern: "{KEY}"
      type: string
      approval: {{four_eyes: true}}
"""
ROUNDS = 200  # "hundreds of times on every path" (issue 41): ~0.1 s a round


@pytest.fixture
def eyes_app(tmp_path: Path, redis_client: Redis, workspace: str) -> App:
    path = team_config(tmp_path, ["slack:U0SAM"], [], team_tenants(workspace))
    path.write_text(path.read_text().replace("  keys:\n", EYES, 1))
    return build_app(workspace, path, client=redis_client)


@pytest.fixture
def bot(eyes_app: App, openai_server: OpenAIServer) -> Iterator[SlackBot]:
    openai_server.answer_with = proposing(KEY, "postgres")
    with (
        SlackServer(channels={CHANNEL}) as slack,
        proposing_bot(eyes_app, slack, openai_server) as running,
    ):
        yield running


@pytest.fixture
def race() -> Iterator[Racer]:
    with racer(2) as running:
        yield running


def asked(bot: SlackBot) -> dict[str, Any]:
    """Alice asks, in a thread of her own; the reply offering the proposal (revision 0)."""
    root = mention("which database for billing?", user=ALICE)
    bot.event(root)

    def reply() -> dict[str, Any] | None:
        return next((m for m in bot.slack.messages if m.get("thread_ts") == root["ts"]), None)

    found = bot.slack.wait_until(reply)
    bot.listeners.idle()  # (posted before it is recorded as showing the proposal)
    return dict(found)


def revision(reply: dict[str, Any], action: str, to: int) -> str:
    """The value of ``reply``'s ``action`` button, for revision ``to``."""
    ref = json.loads(button(reply, action)["value"])
    return json.dumps(ref | {"v": to}, separators=(",", ":"))


def test_an_edit_and_an_apply_racing_in_slack_never_approve_their_own_edit(
    bot: SlackBot, eyes_app: App, race: Racer
) -> None:
    wins = {"edit": 0, "apply": 0}
    for n in range(ROUNDS):
        reply = asked(bot)
        pid = json.loads(button(reply, "ApplyProposal")["value"])["t"]
        bot.click(reply, "EditProposal", user=BOB)
        form = bot.opened(n + 1)[-1]
        edit = lambda form=form: bot.submit(form, "mine", user=BOB)  # noqa: E731
        apply = lambda reply=reply: bot.click(reply, "ApplyProposal", user=BOB)  # noqa: E731
        # at one barrier; or the click sent as the modal closes (Slack has its answer, the
        # bot applies the edit in a listener of its own): the edit's head start
        answers = race.at_once(edit, apply) if n % 2 else [edit(), apply()]
        assert [a.status_code for a in answers] == [200, 200], n
        bot.listeners.idle()
        kept = eyes_app.gateway.proposals.get(pid)
        assert kept is not None
        if kept.status is ProposalStatus.PENDING:  # the edit came first: Carol approves it
            assert kept.edited is not None and kept.approvals == [], n
            wins["edit"] += 1
            bot.click(reply, "ApplyProposal", user=CAROL, value=revision(reply, "ApplyProposal", 1))
            bot.listeners.idle()
        else:
            assert kept.edited is None, n  # the Apply came first: the value Alice asked for
            wins["apply"] += 1
    records = eyes_app.log.latest(ROUNDS + 1, key=KEY)
    assert len(records) == ROUNDS, wins
    wrong = [four_eyes_broken(r.mutation.meta, r.mutation.actor) for r in records]
    assert [w for w in wrong if w] == [], wins


def test_a_button_of_the_revision_before_an_edit_is_refused_and_changes_nothing(
    bot: SlackBot, eyes_app: App
) -> None:
    """The Apply button as the previous release rendered it (``{"s","t","v"}``, revision 0),
    clicked after Bob's edit: refused, with what it reads now; Carol's click on the same
    button before any edit would have applied it (the second thread shows it)."""
    reply = asked(bot)
    pid = json.loads(button(reply, "ApplyProposal")["value"])["t"]
    assert set(json.loads(button(reply, "ApplyProposal")["value"])) == {"s", "t", "v"}
    bot.click(reply, "EditProposal", user=BOB)
    bot.submit(bot.opened()[-1], "mine", user=BOB)
    bot.listeners.idle()
    bot.click(reply, "ApplyProposal", user=CAROL)  # still revision 0, as it was posted
    bot.listeners.idle()
    [notice] = bot.ephemerals()
    assert notice["user"] == CAROL and "edited by user:U0BOB since you saw it" in notice["text"]
    kept = eyes_app.gateway.proposals.get(pid)
    assert kept is not None and kept.status is ProposalStatus.PENDING and kept.approvals == []
    assert len(eyes_app.log) == 0
    other = asked(bot)  # unedited, the same button applies
    bot.click(other, "ApplyProposal", user=CAROL)
    bot.listeners.idle()
    assert eyes_app.store.get(KEY).value == "postgres"  # type: ignore[union-attr]
