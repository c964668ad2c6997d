"""An expired proposal's messages close without a click: the adapter keeps where it posted a
proposal's buttons, and the worker's sweep (``expire_due``, then ``ExpiredMessages``, with the
bot token from the environment) edits each one with ``chat.update`` to say it expired, its
buttons gone; a second sweep edits nothing. A click that finds it expired closes the
others at once."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from bot.app import App
from bot.cli.closers import closers_from_env
from bot.proposals.expiry import ByPlatform, ExpiredMessages
from bot.proposals.refs import ShownMessages
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import ProposalStatus
from tests.bot.slack.rig import TEAM, SlackBot, message
from tests.bot.slack.test_lifecycle import (
    closing_line,
    has_buttons,
    proposal_id,
    proposed,
    proposing_bot,
)
from tests.openai_server import OpenAIServer
from tests.servers.slack_api import SlackServer


@pytest.fixture
def due(team_app: App) -> App:
    """The app, its proposals due as soon as they are made."""
    gateway = MutationGateway(team_app.store, team_app.policy, proposal_expiry_ms=0)
    return dataclasses.replace(team_app, gateway=gateway)


@pytest.fixture
def bot(due: App, slack_api: SlackServer, openai_server: OpenAIServer) -> Iterator[SlackBot]:
    with proposing_bot(due, slack_api, openai_server) as running:
        yield running


def expired_line(app: App, proposal_id: str) -> str:
    """The line a message of the expired proposal closes with: its deadline in UTC, and how
    long ago as each reader's Slack counts it (the UTC time again where it cannot)."""
    proposal = app.gateway.proposals.get(proposal_id)
    assert proposal is not None and proposal.expires_at is not None
    at = proposal.expires_at
    utc = datetime.fromtimestamp(at / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return (
        f"⌛ This proposal expired at {utc} (<!date^{at // 1000}^{{ago}}|{utc}>); "
        "nothing was changed."
    )


def sweep(app: App, slack: SlackServer) -> int:
    """The worker's minute: expire what is due, then close its messages."""
    app.gateway.expire_due()
    return ExpiredMessages(app, closers_from_env(slack.env())).run()


def test_the_sweep_closes_the_message_of_an_expired_proposal(
    bot: SlackBot, due: App, slack_api: SlackServer
) -> None:
    reply = proposed(bot)
    bot.listeners.idle()  # the reply is posted, and then kept
    pid = proposal_id(reply)
    [kept] = ShownMessages(due.redis, due.store.workspace).of(pid)
    assert (kept.platform, kept.channel, kept.message) == ("slack", reply["channel"], reply["ts"])
    assert kept.thread == reply["thread_ts"] and slack_api.updates == []
    assert (kept.team, kept.enterprise, kept.org_install) == (TEAM, None, False)  # its token's
    assert sweep(due, slack_api) == 1
    [update] = slack_api.updates
    assert update["ts"] == reply["ts"] and not has_buttons(update)
    assert closing_line(update) == expired_line(due, pid)
    assert not has_buttons(slack_api.messages[0])  # as Slack shows it now
    proposal = due.gateway.proposals.get(pid)
    assert proposal is not None and proposal.status is ProposalStatus.EXPIRED
    assert sweep(due, slack_api) == 0 and len(slack_api.updates) == 1  # once
    assert ShownMessages(due.redis, due.store.workspace).of(pid) == []


def test_a_message_the_sweep_could_not_edit_is_edited_next_time(
    bot: SlackBot, due: App, slack_api: SlackServer
) -> None:
    reply = proposed(bot)
    bot.listeners.idle()  # the reply is posted, and then kept
    due.gateway.expire_due()
    assert ExpiredMessages(due, ByPlatform()).run() == 0  # no Slack token in this worker
    assert slack_api.updates == [] and has_buttons(slack_api.messages[0])
    assert sweep(due, slack_api) == 1
    assert not has_buttons(slack_api.messages[0]) and slack_api.updates[0]["ts"] == reply["ts"]


def test_a_click_on_an_expired_proposal_closes_its_other_messages(
    bot: SlackBot, due: App, slack_api: SlackServer
) -> None:
    first = proposed(bot)
    bot.listeners.idle()
    # the same proposal shown again, in a second message of the thread
    bot.event(message("and then?", thread_ts=first["thread_ts"]))
    second = bot.replies(2)[-1]
    bot.listeners.idle()
    assert proposal_id(second) == proposal_id(first), "the same proposal, shown twice"
    bot.click(first, "ApplyProposal", user="U0BOB")
    slack_api.wait_until(lambda: len(slack_api.updates) >= 2)
    bot.listeners.idle()
    assert {u["ts"] for u in slack_api.updates} == {first["ts"], second["ts"]}
    assert len(slack_api.updates) == 2  # the clicked one once
    assert not any(has_buttons(m) for m in slack_api.messages)
    # the clicked message says it as the others do (and the sweep would: it adds nothing)
    lines = [closing_line(update) for update in slack_api.updates]
    assert lines == [expired_line(due, proposal_id(first))] * 2
    assert sweep(due, slack_api) == 0 and len(slack_api.updates) == 2
