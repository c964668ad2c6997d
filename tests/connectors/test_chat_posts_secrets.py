"""A rule that posts into a chat shows no secret key's value there, as chat never does: a
catch-all rule ("post every change to #decisions") posted every secret's new value into a
channel, to Discord, to a stream's chat. Its templates read such a value as ``(secret)``;
a webhook (``http.post``), which may need the value, still gets it. Through the real worker,
the real client libraries and the local platform servers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.gateway.outcome import SECRET
from core.redis.client import RedisClient
from tests.bot.secret_paths import VAULT
from tests.rules.rig import make_rig
from tests.servers.discord_api import DiscordServer
from tests.servers.helix import HelixServer
from tests.servers.slack_api import SlackServer
from tests.servers.webhook import WebhookServer

CHANNEL, DISCORD_CHANNEL = "C0DECISIONS", "1234567890"
TOKEN = "vault-token-Zq81-never-in-a-chat"
SAYS = "{{ mutation.key }} is now {{ mutation.value }} (token: {{ state['vault.token'] }})"
RULES = f"""\
  - id: tells_slack
    when: {{key: "*"}}
    then:
      - action: slack.postMessage
        args: {{channel: {CHANNEL}, text: "{SAYS}"}}
      - action: discord.sendMessage
        args: {{channel_id: "{DISCORD_CHANNEL}", content: "{SAYS}"}}
      - action: twitch.sendChatMessage
        args: {{message: "{SAYS}"}}
      - action: http.post
        args: {{url: "{{url}}", json: {{said: "{SAYS}"}}}}
"""


@pytest.fixture
def servers() -> Iterator[tuple[SlackServer, DiscordServer, HelixServer, WebhookServer]]:
    with (
        SlackServer(channels={CHANNEL}) as slack,
        DiscordServer(channels={DISCORD_CHANNEL}) as discord,
        HelixServer() as helix,
        WebhookServer() as hook,
    ):
        yield slack, discord, helix, hook


def test_a_catch_all_rule_posts_no_secret_into_a_chat_and_a_webhook_still_gets_it(
    tmp_path: Path,
    redis_client: RedisClient,
    workspace: str,
    servers: tuple[SlackServer, DiscordServer, HelixServer, WebhookServer],
) -> None:
    slack, discord, helix, hook = servers
    env = {**slack.env(), **discord.env(), **helix.env()}
    rules = RULES.replace("{url}", hook.hook_url)
    rig = make_rig(tmp_path, redis_client, workspace, rules, env=env, keys=VAULT)
    rig.commit("set", "vault.token", TOKEN, who="admin:root")
    rig.commit("set", "test.go", "yes")
    rig.work()
    chats = [
        *(m["text"] for m in slack.messages),
        *(m["content"] for m in discord.messages),
        *(m["message"] for m in helix.chat_messages),
    ]
    assert len(chats) == 6, chats
    for said in chats:
        assert TOKEN not in said and SECRET.strip("()") in said, said
    assert sum("vault.token is now (secret)" in said for said in chats) == 3, chats
    assert sum(said.startswith("test.go is now yes") for said in chats) == 3, chats
    sent = [request.json["said"] for request in hook.requests]
    assert sent == [
        f"vault.token is now {TOKEN} (token: {TOKEN})",
        f"test.go is now yes (token: {TOKEN})",
    ]
