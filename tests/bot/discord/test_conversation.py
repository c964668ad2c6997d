"""A conversation in a Discord channel as people have it: refinements accumulate into the
candidate, Expand keeps them, and what is committed is what the last reply showed; a decision
said outright is one click away."""

from __future__ import annotations

from bot.app import App
from bot.discord.turns import Listening
from tests.bot.discord import payloads
from tests.bot.discord.payloads import CHANNEL
from tests.bot.discord.rig import DiscordBot
from tests.servers.discord_api import DiscordServer
from tests.servers.discord_interactions import EPHEMERAL

IDEA = "what if we used managed postgres on RDS with one read replica"
PITR = "add point-in-time recovery to it"
REGION = "keep it in eu-west-1 only"


def test_refinements_survive_expand_into_the_committed_value(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    for said in (IDEA, PITR, REGION):
        bot.say(said)
    third = discord_api.public()[-1]
    assert f"{IDEA}; {PITR}; {REGION}" in third["content"]
    bot.click(third, "ExpandCurrent")
    expanded = discord_api.public()[-1]
    assert expanded["id"] != third["id"] and "who owns it" in expanded["content"]
    bot.click(expanded, "ConfirmCurrent")
    [record] = team_app.log.latest(5)
    assert record.mutation.value == f"{IDEA}; {PITR}; {REGION}"


def test_a_decision_said_outright_is_one_click_away(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    bot.say("let's go with managed postgres on RDS, with one read replica")
    [reply] = discord_api.public()
    assert payloads.custom_id_of(reply, "ConfirmCurrent")
    assert len(team_app.log) == 0  # offered, never done without the click
    bot.click(reply, "ConfirmCurrent")
    [record] = team_app.log.latest(5)
    assert record.mutation.value == "managed postgres on RDS, with one read replica"


def test_a_channel_shows_its_candidate_after_a_restart_and_takes_a_topic(
    team_app: App, discord_api: DiscordServer
) -> None:
    first = DiscordBot(team_app, discord_api)
    try:
        first.say("We need to pick a database for the new billing service. Ideas?")
        first.say("what about postgres on RDS")
        said = discord_api.public()[-1]
        assert "decides `decision.database-billing-service`" in said["content"]
    finally:
        first.close()
    bot = DiscordBot(team_app, discord_api)  # a restart: nothing in memory
    try:
        bot.command("show")
        shown = discord_api.messages[-1]
        assert shown["flags"] == EPHEMERAL and "postgres on RDS" in shown["content"]
        assert payloads.custom_id_of(shown, "ConfirmCurrent")  # its buttons, for the asker
        bot.command("topic", name="billing DB")
        renamed = discord_api.public()[-1]
        assert 'Topic: "billing DB"' in renamed["content"]
        assert "decides `decision.billing-db`" in renamed["content"]
        bot.say("show")  # said to the bot: a message has no ephemeral reply on Discord
        again = discord_api.public()[-1]
        assert "postgres on RDS" in again["content"] and payloads.custom_id_of(
            again, "ExpandCurrent"
        )
        bot.click(renamed, "ConfirmCurrent")
        [record] = team_app.log.latest(5)
        assert (record.mutation.key, record.mutation.value) == (
            "decision.billing-db",
            "postgres on RDS",
        )
    finally:
        bot.close()


def test_show_and_topic_stay_out_of_channels_the_bot_does_not_take_part_in(
    team_app: App, discord_api: DiscordServer
) -> None:
    bot = DiscordBot(team_app, discord_api, listening=Listening.of(["elsewhere"], "mentions"))
    try:
        bot.command("topic", name="billing DB")
        [answer] = [m for m in discord_api.messages if m["flags"] == EPHEMERAL]
        assert "does not take part in this channel" in answer["content"]
        assert discord_api.public() == []
        assert not team_app.runtime(use_env=False).sessions.exists(f"discord:{CHANNEL}")
    finally:
        bot.close()
