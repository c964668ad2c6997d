"""An expired proposal's Discord messages close without a click: the adapter keeps the
messages it posted with a proposal's buttons, and the worker's sweep edits each through the
REST API (``PATCH /channels/{channel}/messages/{message}``, with ``DISCORD_TOKEN`` and
``DISCORD_API_URL`` from the environment) to say it expired, its buttons gone; a second
sweep edits nothing. The person who asked is told in the channel what became of it."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from bot.app import App
from bot.cli.closers import closers_from_env
from bot.proposals.expiry import ExpiredMessages
from bot.proposals.refs import ShownMessages
from bot.proposals.telling import Requesters
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import ProposalStatus
from tests.bot.discord.payloads import ALICE, CHANNEL, GUILD, SAM
from tests.bot.discord.test_clicks import closing_lines
from tests.bot.discord.test_lifecycle import proposal_of, proposed, proposing_bot
from tests.openai_server import OpenAIServer
from tests.servers.discord_api import DiscordServer


def test_the_sweep_closes_the_message_of_an_expired_proposal(
    team_app: App, discord_api: DiscordServer, openai_server: OpenAIServer
) -> None:
    gateway = MutationGateway(team_app.store, team_app.policy, proposal_expiry_ms=0)
    due = dataclasses.replace(team_app, gateway=gateway)  # its proposals are due at once
    bot = proposing_bot(due, discord_api, openai_server)
    try:
        reply = proposed(bot)
    finally:
        bot.close()
    pid = proposal_of(reply)
    [kept] = ShownMessages(due.redis, due.store.workspace).of(pid)
    assert (kept.platform, kept.channel, kept.message) == ("discord", str(CHANNEL), reply["id"])
    assert kept.text == reply["content"] and kept.team == GUILD  # the server it was shown in
    due.gateway.expire_due()
    closing = ExpiredMessages(due, closers_from_env(discord_api.env()))
    assert closing.run() == 1
    message = discord_api.message(reply["id"])
    assert message["components"] == [] and message["edits"] == 1
    proposal = due.gateway.proposals.get(pid)
    assert proposal is not None and proposal.status is ProposalStatus.EXPIRED
    assert proposal.expires_at is not None
    at = proposal.expires_at
    utc = datetime.fromtimestamp(at / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    # the deadline in UTC, and how long ago as each reader's Discord counts it
    assert closing_lines(message) == [
        f"⌛ This proposal expired at {utc} (<t:{at // 1000}:R>); nothing was changed."
    ]
    assert message["content"].startswith(reply["content"])
    assert closing.run() == 0 and discord_api.message(reply["id"])["edits"] == 1  # once


def test_the_requester_hears_of_a_discard_in_the_channel(
    team_app: App, discord_api: DiscordServer, openai_server: OpenAIServer
) -> None:
    """Alice asked; Sam discards with a reason; the sweep tells Alice, pinging her alone,
    in a reply to the message that showed it, once."""
    bot = proposing_bot(team_app, discord_api, openai_server)
    try:
        reply = proposed(bot)
        bot.click(reply, "DiscardProposal", user=SAM)
        bot.submit(reply, "we run mysql already", user=SAM)
    finally:
        bot.close()
    telling = Requesters(team_app, closers_from_env(discord_api.env()))
    assert telling.run() == 1
    [word] = [m for m in discord_api.public() if "your change" in m["content"]]
    assert word["content"].startswith(f"<@{ALICE}> your change was discarded by ")
    assert "(we run mysql already)" in word["content"]
    assert word["allowed_mentions"] == {"parse": [], "users": [ALICE]}
    assert word["message_reference"]["message_id"] == reply["id"]
    assert telling.run() == 0
    assert discord_api.direct(ALICE) == []  # no direct message unless the config asks
    assert [r for r in discord_api.requests if r.path.endswith("/users/@me/channels")] == []
