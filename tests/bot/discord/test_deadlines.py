"""Deadlines in Discord messages: the reply that offers a proposal's buttons has a small line
saying until when it may be applied, in UTC and as a timestamp Discord counts down for each
reader (``<t:…:R>``: "in 24 hours", then "3 minutes ago"), the proposal's own deadline by
the Redis server's clock; a proposal for a while says how long its change lasts once
applied; a commit for a while says when it reverts. The model proposes through its tool
(the local OpenAI-protocol server) to the local Discord REST API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.app import App
from bot.discord.render import render
from core.time_phrases import utc_text
from tests.bot.discord.payloads import CHANNEL
from tests.bot.discord.rig import DiscordBot
from tests.bot.discord.test_lifecycle import proposal_of, proposed, proposing_bot
from tests.bot.discord.test_parts import button, view
from tests.openai_server import OpenAIServer
from tests.servers.discord_api import DiscordServer

NOW = 1_777_636_800_000  # 2026-05-01 12:00:00 UTC


@pytest.fixture
def proposer(
    team_app: App, discord_api: DiscordServer, openai_server: OpenAIServer
) -> Iterator[DiscordBot]:
    bot = proposing_bot(team_app, discord_api, openai_server)
    yield bot
    bot.close()


def deadline_lines(content: str) -> list[str]:
    return [line for line in content.splitlines() if line.startswith("-# ⏳ ")]


def test_a_proposal_says_until_when_it_may_be_applied(proposer: DiscordBot, team_app: App) -> None:
    reply = proposed(proposer)
    assert reply["channel_id"] == str(CHANNEL)
    proposal = team_app.gateway.proposals.get(proposal_of(reply))
    assert proposal is not None and proposal.expires_at is not None
    at = proposal.expires_at
    assert deadline_lines(reply["content"]) == [
        f"-# ⏳ expires at {utc_text(at)} (<t:{at // 1000}:R>)"
    ]
    assert reply["allowed_mentions"]["parse"] == []  # a timestamp pings nobody


def test_a_change_for_a_while_says_how_long_it_lasts_then_when_it_reverts() -> None:
    offer = view([button("ApplyProposal")]).model_copy(
        update={"expires_at": NOW + 3_600_000, "lasts_sec": 1800}
    )
    [message] = render(offer)
    assert deadline_lines(message.content) == [
        "-# ⏳ expires at 2026-05-01 13:00:00 UTC (<t:1777640400:R>)"
        " · reverts by itself 30m after it is applied"
    ]
    done = view([]).model_copy(update={"reverts_at": NOW + 1_800_000})
    [message] = render(done)
    assert deadline_lines(message.content) == [
        "-# ⏳ reverts at 2026-05-01 12:30:00 UTC (<t:1777638600:R>)"
    ]
    [plain] = render(view([]))
    assert deadline_lines(plain.content) == []
