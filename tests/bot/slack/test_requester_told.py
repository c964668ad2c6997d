"""The person who asked for a change is told in its thread what became of it, once per
change, by the worker's sweep (``Requesters``, with the bot token from the environment):
applied, discarded with the reason, expired. The model proposes for U0ALICE, whose mention
started the thread."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from bot.app import App
from bot.cli.closers import closers_from_env
from bot.proposals.expiry import ExpiredMessages
from bot.proposals.telling import Requesters
from core.gateway.mutation_gateway import MutationGateway
from tests.bot.slack.rig import SlackBot
from tests.bot.slack.test_lifecycle import proposed, proposing_bot
from tests.openai_server import OpenAIServer
from tests.servers.slack_api import SlackServer


@pytest.fixture
def bot(team_app: App, slack_api: SlackServer, openai_server: OpenAIServer) -> Iterator[SlackBot]:
    with proposing_bot(team_app, slack_api, openai_server) as running:
        yield running


def sweep(app: App, slack: SlackServer) -> None:
    """The worker's minute: expire, tell the requesters, close the messages."""
    closers = closers_from_env(slack.env())
    app.gateway.expire_due()
    Requesters(app, closers).run()
    ExpiredMessages(app, closers).run()


def told(slack: SlackServer) -> list[dict[str, Any]]:
    return [m for m in slack.messages if "your change" in str(m.get("text"))]


def test_the_requester_hears_of_a_discard_and_its_reason(
    bot: SlackBot, team_app: App, slack_api: SlackServer
) -> None:
    reply = proposed(bot)
    bot.click(reply, "DiscardProposal", user="U0BOB")
    bot.submit(bot.opened()[0], "we are live until 9", user="U0BOB")
    slack_api.wait_until(lambda: slack_api.updates)
    bot.listeners.idle()
    sweep(team_app, slack_api)
    [word] = told(slack_api)
    assert word["thread_ts"] == reply["thread_ts"] and word["text"].startswith("<@U0ALICE> ")
    assert "discarded by user:U0BOB" in word["text"]
    assert "(we are live until 9)" in word["text"]
    sweep(team_app, slack_api)
    assert len(told(slack_api)) == 1  # once


def test_the_requester_hears_it_was_applied(
    bot: SlackBot, team_app: App, slack_api: SlackServer
) -> None:
    reply = proposed(bot)
    bot.click(reply, "ApplyProposal", user="U0BOB")
    slack_api.wait_until(lambda: slack_api.updates)
    bot.listeners.idle()
    sweep(team_app, slack_api)
    [word] = told(slack_api)
    assert "<@U0ALICE> your change was applied by user:U0BOB: set scene.name = BRB" in word["text"]


def test_the_requester_hears_it_expired(
    team_app: App, slack_api: SlackServer, openai_server: OpenAIServer
) -> None:
    gateway = MutationGateway(team_app.store, team_app.policy, proposal_expiry_ms=0)
    due = dataclasses.replace(team_app, gateway=gateway)  # its proposals due at once
    with proposing_bot(due, slack_api, openai_server) as running:
        reply = proposed(running)
        running.listeners.idle()
    sweep(due, slack_api)
    [word] = told(slack_api)
    assert word["thread_ts"] == reply["thread_ts"] and "expired at" in word["text"]
    assert len(slack_api.updates) == 1  # and its message is closed
    sweep(due, slack_api)
    assert len(told(slack_api)) == 1 and len(slack_api.updates) == 1
