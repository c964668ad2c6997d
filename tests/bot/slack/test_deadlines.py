"""Deadlines in Slack messages: the reply that offers a proposal's buttons has a context line
saying until when it may be applied, in UTC and (Slack's date formatting) in the reader's
own time, the proposal's own deadline by the Redis server's clock; a proposal for a while
says how long its change lasts once applied; a commit for a while says when it reverts. The
model proposes through its tool (the local OpenAI-protocol server) to the local Slack API."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bot.app import App
from bot.slack.render import view_blocks
from core.time_phrases import utc_text
from tests.bot.slack.rig import SlackBot
from tests.bot.slack.test_lifecycle import proposal_id, proposed, proposing_bot
from tests.bot.slack.test_parts import a_view
from tests.openai_server import OpenAIServer
from tests.servers.slack_api import SlackServer

NOW = 1_777_636_800_000  # 2026-05-01 12:00:00 UTC


@pytest.fixture
def bot(team_app: App, slack_api: SlackServer, openai_server: OpenAIServer) -> Iterator[SlackBot]:
    with proposing_bot(team_app, slack_api, openai_server) as running:
        yield running


def deadline_lines(blocks: list[dict[str, Any]]) -> list[str]:
    return [
        str(b["elements"][0]["text"])
        for b in blocks
        if b["type"] == "context" and str(b["elements"][0]["text"]).startswith("⏳ ")
    ]


def test_a_proposal_says_until_when_it_may_be_applied(bot: SlackBot, team_app: App) -> None:
    reply = proposed(bot)
    proposal = team_app.gateway.proposals.get(proposal_id(reply))
    assert proposal is not None and proposal.expires_at is not None
    at = proposal.expires_at
    [line] = deadline_lines(reply["blocks"])
    assert line == (
        f"⏳ expires at {utc_text(at)} "
        f"(<!date^{at // 1000}^{{date_pretty}} at {{time_secs}}|{utc_text(at)}>)"
    )
    types = [b["type"] for b in reply["blocks"]]
    assert types[-1] == "actions" and types[-2] == "context"  # above the buttons


def test_a_change_for_a_while_says_how_long_it_lasts_then_when_it_reverts() -> None:
    [offer] = deadline_lines(view_blocks(a_view(expires_at=NOW + 3_600_000, lasts_sec=1800)))
    assert offer.startswith("⏳ expires at 2026-05-01 13:00:00 UTC (<!date^1777640400^")
    assert offer.endswith(" · reverts by itself 30m after it is applied")
    [done] = deadline_lines(view_blocks(a_view(reverts_at=NOW + 1_800_000)))
    assert done == (
        "⏳ reverts at 2026-05-01 12:30:00 UTC "
        "(<!date^1777638600^{date_pretty} at {time_secs}|2026-05-01 12:30:00 UTC>)"
    )
    assert deadline_lines(view_blocks(a_view())) == []  # nothing to say: no line
