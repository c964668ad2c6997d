"""A secret key's proposal in Slack, as reproduced: a stale Apply button read out the value
an edit typed in the modal ("it now reads set vault.token = <value>"), to a member who may
not even apply it. Now nothing the bot sends to Slack (messages, updates, ephemeral
answers, response URLs, modals) carries the proposed or the typed value, and neither does
any Redis key of the workspace but the entry and the log."""

from __future__ import annotations

import json
from pathlib import Path

import openai
from redis import Redis

from bot.app import build_app
from core.gateway.outcome import SECRET
from core.llm.chat import ChatModel
from tests.bot.secret_paths import VAULT, leaks
from tests.bot.slack.conftest import config_with_roles
from tests.bot.slack.rig import SlackBot, button, mention
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.servers.slack_api import SlackServer

OLD, NEW = "sk_live_proposed_0ld", "sk_live_typed_N3W"


def sent_to_slack(slack: SlackServer) -> str:
    return json.dumps([vars(c) for c in slack.calls] + slack.responses, default=str)


def test_a_stale_apply_in_slack_reads_out_no_secret(
    tmp_path: Path,
    redis_client: Redis,
    workspace: str,
    slack_api: SlackServer,
    openai_server: OpenAIServer,
) -> None:
    path = config_with_roles(tmp_path, workspace)
    path.write_text(path.read_text().replace("  keys:\n", "  keys:\n" + VAULT, 1))
    app = build_app(workspace, path, client=redis_client)
    openai_server.answer_with = proposing("vault.token", OLD)
    client = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    bot = SlackBot(app, slack_api, ChatModel(client, "m", timeout_sec=5)).start()
    try:
        bot.event(mention("rotate the stream key"))
        reply = bot.replies()[-1]
        assert (
            button(reply, "ApplyProposal")["text"]["text"] == f"Apply: set vault.token = {SECRET}"
        )
        bot.click(reply, "EditProposal", user="U0SAM")  # a moderator
        [form] = bot.opened()
        bot.submit(form, NEW, user="U0SAM")  # one of the two approvals the key needs
        bot.listeners.idle()
        pid = json.loads(button(reply, "EditProposal")["value"])["t"]
        assert app.gateway.proposals.get(pid).revision == 1  # type: ignore[union-attr]
        bot.click(reply, "ApplyProposal", user="U0ALICE")  # a member, the stale button
        bot.click(reply, "ApplyProposal", user="U0MIA")  # a moderator, the stale button
        bot.listeners.idle()
    finally:
        bot.stop()
    said = sent_to_slack(slack_api)
    assert "edited by" in said and "since you saw it" in said  # the moderator was told
    assert OLD not in said and NEW not in said
    assert app.store.get("vault.token") is None
    found = leaks(redis_client, workspace, [OLD, NEW], waiting=[pid])
    assert not found, found.where
