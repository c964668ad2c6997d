"""On Discord as on Slack (``tests/bot/slack/test_unconfirmed.py``, whose helpers these are):
a click whose commit Redis does not confirm within ``store.commit_retry_sec`` is told to the
clicker, ephemerally, as ``UNCONFIRMED``, not ``TROUBLE``; the clicked message keeps its
buttons; clicked again once Redis writes, the change is in the log once. Redis is a server of
the test's own, its writes paused (CLIENT PAUSE WRITE) as the commit script goes out."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.chat.notices import UNCONFIRMED
from tests.bot.discord.conftest import server_tenants
from tests.bot.discord.payloads import CREW, SAM
from tests.bot.discord.rig import DiscordBot
from tests.bot.discord.test_clicks import started
from tests.bot.slack.test_unconfirmed import WORKSPACE, PausedAtCommit, paused_app, unpause
from tests.servers.discord_api import DiscordServer
from tests.servers.discord_interactions import EPHEMERAL
from tests.servers.redis_process import RedisProcess
from tests.team_config import team_config


@pytest.fixture
def paused_bot(
    own_redis: RedisProcess, discord_api: DiscordServer, tmp_path: Path
) -> Iterator[tuple[DiscordBot, PausedAtCommit]]:
    config = team_config(tmp_path, [], [f"discord:{CREW}"], server_tenants(WORKSPACE))
    app, client = paused_app(own_redis, config)
    bot = DiscordBot(app, discord_api)
    yield bot, client
    unpause(own_redis)
    bot.close()


def test_a_click_redis_does_not_confirm_is_told_so_and_lands_once_when_sent_again(
    paused_bot: tuple[DiscordBot, PausedAtCommit],
    own_redis: RedisProcess,
    discord_api: DiscordServer,
) -> None:
    bot, client = paused_bot
    reply = started(bot)
    client.arm(own_redis)
    bot.click(reply, "ConfirmCurrent", user=SAM)  # returns once the click is handled
    assert client.paused.is_set()  # the commit met the pause (the click's save with it)
    [notice] = discord_api.ephemerals()
    assert notice["content"] == UNCONFIRMED and notice["flags"] & EPHEMERAL
    assert discord_api.message(reply["id"]).get("edits") is None  # no closing line
    unpause(own_redis)
    assert len(bot.app.log) <= 1
    bot.click(reply, "ConfirmCurrent")  # once Redis writes: the same mutation, by Alice
    [record] = bot.app.log.latest(5)
    assert record.mutation.key.startswith("decision.")
