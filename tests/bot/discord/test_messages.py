"""Which Discord messages are turns, in which session, answered how: through discord.py's
MESSAGE_CREATE parser and the local REST API."""

from __future__ import annotations

from bot.app import App
from bot.discord.turns import Listening
from tests.bot.discord.payloads import BOT_ID, CHANNEL, OTHER, THREAD, custom_ids
from tests.bot.discord.rig import DiscordBot
from tests.servers.discord_api import DiscordServer

IDEA = "what if we used postgres"


def test_a_mention_gets_a_reply_with_buttons(bot: DiscordBot, discord_api: DiscordServer) -> None:
    said = bot.say(IDEA)
    [reply] = discord_api.public()
    assert reply["channel_id"] == CHANNEL and reply["message_reference"]["message_id"] == int(
        said["id"]
    )
    assert f"<@{BOT_ID}>" not in reply["content"] and IDEA in reply["content"]
    assert reply["allowed_mentions"] == {"parse": []}  # nobody is pinged by what we echo
    assert custom_ids(reply) and all(c.startswith("dlb:") for c in custom_ids(reply))
    assert discord_api.requests_to("POST", "/api/v10/channels/{c}/typing")


def test_a_channel_is_a_session_and_a_thread_another(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    bot.say(IDEA)
    bot.say("or maybe sqlite", channel=THREAD)
    sessions = team_app.runtime(use_env=False).sessions
    assert sessions.exists(f"discord:{CHANNEL}") and sessions.exists(f"discord:{THREAD}")
    assert [m["channel_id"] for m in discord_api.public()] == [CHANNEL, THREAD]


def test_without_a_mention_nothing_is_said(bot: DiscordBot, discord_api: DiscordServer) -> None:
    bot.say(IDEA, mention_bot=False)
    bot.say(IDEA, bot=True)  # another bot, mentioning us
    bot.say("   ")  # nothing left once the mention is out
    assert discord_api.messages == []


def test_a_redelivered_message_is_handled_once(bot: DiscordBot, discord_api: DiscordServer) -> None:
    said = bot.say(IDEA)
    bot.dispatch("MESSAGE_CREATE", said)  # a resumed gateway session replays it
    assert len(discord_api.public()) == 1


def test_listening_in_some_channels_every_message(
    team_app: App, discord_api: DiscordServer
) -> None:
    bot = DiscordBot(team_app, discord_api, listening=Listening.of(["deliberation"], "all"))
    try:
        bot.say(IDEA, mention_bot=False)  # every message in #deliberation
        bot.say("a thread's parent counts", channel=THREAD, mention_bot=False)
        bot.say("not in #general", channel=OTHER)
        assert [m["channel_id"] for m in discord_api.public()] == [CHANNEL, THREAD]
    finally:
        bot.close()


def test_a_channel_by_id(team_app: App, discord_api: DiscordServer) -> None:
    bot = DiscordBot(team_app, discord_api, listening=Listening.of([OTHER], "mentions"))
    try:
        bot.say(IDEA)
        bot.say(IDEA, channel=OTHER)
        assert [m["channel_id"] for m in discord_api.public()] == [OTHER]
    finally:
        bot.close()


def test_a_post_discord_refuses_is_logged_and_nothing_breaks(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    discord_api.channels = {THREAD}  # #deliberation is gone
    bot.say(IDEA)
    assert discord_api.messages == []
    bot.say(IDEA, channel=THREAD)
    assert len(discord_api.public()) == 1
