"""A secret key's proposal on Discord, as reproduced in Slack too: a stale Apply button read
out the value an edit typed in the form. Now nothing the bot sends Discord (messages, their
edits, interaction answers and follow-ups, forms) carries the proposed or the typed value,
and no Redis key of the workspace does but the entry, the log and the waiting proposal."""

from __future__ import annotations

import json
from pathlib import Path

from redis import Redis

from bot.app import build_app
from connectors.discord_markdown import escape
from core.gateway.outcome import SECRET
from tests.bot.discord import payloads
from tests.bot.discord.conftest import server_tenants
from tests.bot.discord.payloads import ALICE, CREW, MIA, SAM
from tests.bot.discord.rig import DiscordBot
from tests.bot.discord.test_clicks import model
from tests.bot.secret_paths import VAULT, leaks
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.servers.discord_api import DiscordServer
from tests.team_config import team_config

OLD, NEW = "rtmp-key-proposed-0ld", "rtmp-key-typed-N3W"
# (no markup in them: a leak would reach Discord as written here, for the scan to find)
assert escape(OLD) == OLD and escape(NEW) == NEW


def test_a_stale_apply_on_discord_reads_out_no_secret(
    tmp_path: Path,
    redis_client: Redis,
    workspace: str,
    discord_api: DiscordServer,
    openai_server: OpenAIServer,
) -> None:
    path = team_config(tmp_path, [], [f"discord:{CREW}"], server_tenants(workspace))
    path.write_text(path.read_text().replace("  keys:\n", "  keys:\n" + VAULT, 1))
    app = build_app(workspace, path, client=redis_client)
    openai_server.answer_with = proposing("vault.token", OLD)
    bot = DiscordBot(app, discord_api, model=model(openai_server))
    try:
        bot.say("rotate the stream key")
        reply = discord_api.public()[-1]
        stale = payloads.custom_id_of(reply, "ApplyProposal")  # the revision before the edit
        assert OLD not in json.dumps(reply) and SECRET in json.dumps(reply)
        bot.click(reply, "EditProposal", user=SAM)  # a moderator
        bot.submit(reply, NEW, user=SAM)  # one of the two approvals the key needs
        pid = stale.split(":")[3]
        assert app.gateway.proposals.get(pid).revision == 1  # type: ignore[union-attr]
        bot.click(reply, "ApplyProposal", user=ALICE, custom_id=stale)  # a member
        bot.click(reply, "ApplyProposal", user=MIA, custom_id=stale)  # a manager
    finally:
        bot.close()
    interactions = discord_api.interactions
    said = json.dumps([discord_api.messages, interactions.callbacks, interactions.modals])
    assert "since you saw it" in said  # the manager was told it changed
    assert OLD not in said and NEW not in said
    assert app.store.get("vault.token") is None
    found = leaks(redis_client, workspace, [OLD, NEW], waiting=[pid])
    assert not found, found.where
