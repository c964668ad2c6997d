"""A proposal nobody decided is escalated on Discord too, through the REST API with
``DISCORD_TOKEN``: one message in the escalation channel (pinging nobody), and the Discord
reviewers pinged (they alone) in a reply to the message that showed it; the Slack reviewer,
on a platform it was not shown on, is not named. Once, however many sweeps."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from bot.cli.closers import closers_from_env
from bot.proposals.escalation import Escalations
from tests.bot.discord.conftest import server_tenants
from tests.bot.discord.payloads import CHANNEL, CREW, OTHER, RIA, SAM
from tests.bot.discord.test_lifecycle import proposal_of, proposed, proposing_bot
from tests.openai_server import OpenAIServer
from tests.servers.discord_api import DiscordServer
from tests.team_config import team_config

ESCALATE = (
    "      approval:\n"
    "        escalate:\n"
    "          after_sec: 600\n"
    '          channel: "${DELIBERATE_ESCALATION_CHANNEL:-}"\n'
    f'          reviewers: ["discord:{SAM}", "slack:U0SARA", "discord:{RIA}"]\n'
)


@pytest.fixture
def esc_app(
    redis_client: Redis, workspace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> App:
    monkeypatch.setenv("DELIBERATE_ESCALATION_CHANNEL", f"discord:{OTHER}")
    path = team_config(tmp_path, [], [f"discord:{CREW}"], server_tenants(workspace))
    text = path.read_text(encoding="utf-8")
    old = '    - pattern: "decision.*"\n'
    assert text.count(old) == 1
    path.write_text(text.replace(old, old + ESCALATE), encoding="utf-8")
    return build_app(workspace, path, client=redis_client)


def test_escalated_once_to_the_channel_and_the_reviewers_in_a_reply(
    esc_app: App, discord_api: DiscordServer, openai_server: OpenAIServer
) -> None:
    bot = proposing_bot(esc_app, discord_api, openai_server)
    try:
        reply = proposed(bot)
    finally:
        bot.close()
    proposal = esc_app.gateway.proposals.get(proposal_of(reply))
    assert proposal is not None and proposal.escalate is not None
    due = proposal.created_at + 600_000
    escalating = Escalations(esc_app, closers_from_env(discord_api.env()))
    assert escalating.run(now_ms=due - 1) == 0
    assert escalating.run(now_ms=due) == 1
    posted, in_reply = [m for m in discord_api.public() if "awaiting a decision" in m["content"]]
    assert posted["channel_id"] == OTHER and posted["allowed_mentions"]["users"] == []
    assert "set decision.db = postgres" in posted["content"]
    assert in_reply["channel_id"] == CHANNEL
    assert in_reply["message_reference"]["message_id"] == reply["id"]
    since = datetime.fromtimestamp(proposal.created_at / 1000, UTC)
    assert in_reply["content"].startswith(  # when it was made, to the second: no "ago" to
        # go stale in a message that stays
        f"<@{SAM}> <@{RIA}> awaiting a decision since {since:%Y-%m-%d %H:%M:%S} UTC: "
        "set decision.db = postgres"
    ), in_reply["content"]
    assert in_reply["allowed_mentions"] == {"parse": [], "users": [SAM, RIA]}
    assert "U0SARA" not in in_reply["content"]
    assert escalating.run(now_ms=due + 600_000) == 0
    assert len([m for m in discord_api.public() if "awaiting a decision" in m["content"]]) == 2
