"""Clicks as Discord delivers them (INTERACTION_CREATE through discord.py's parser, its
dynamic item and its interaction responses) against the local REST API, which holds the bot
to Discord's rules: one acknowledgement, within 3 seconds, before any follow-up."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from bot.app import App
from core.llm.chat import ChatModel
from core.state.actor import ActorKind
from tests.bot.discord import payloads
from tests.bot.discord.payloads import ALICE, CHANNEL, MIA, OTHER, RIA, SAM, THREAD
from tests.bot.discord.rig import DiscordBot
from tests.bot.slack.test_http_mode import slow_expand
from tests.model_script import proposing
from tests.openai_server import OpenAIServer, Reply
from tests.servers.discord_api import DiscordServer
from tests.servers.discord_interactions import EPHEMERAL, CallbackType

IDEA = "what if we used postgres"


def started(bot: DiscordBot) -> dict[str, Any]:
    bot.say(IDEA)
    return bot.api.public()[-1]


def closing_lines(message: dict[str, Any]) -> list[str]:
    return message["content"].split("\n-# ─────\n")[1].splitlines()


def test_a_click_commits_and_closes_the_message(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    reply = started(bot)
    bot.click(reply, "ConfirmCurrent", user=SAM)
    [(_, callback, delay)] = discord_api.interactions.callbacks
    assert callback == {"type": CallbackType.DEFERRED_UPDATE} and delay < 3
    [record] = team_app.log.latest(5)
    assert record.mutation.actor.id == SAM and record.mutation.key.startswith("decision.")
    closed = discord_api.message(reply["id"])
    assert closing_lines(closed) == [
        f'✅ Committed: set {record.mutation.key} "{IDEA}" (v1) — by <@{SAM}>'
    ]
    buttons = [b for row in closed["components"] for b in row["components"]]
    assert buttons and all(b["disabled"] for b in buttons)
    assert closed["content"].startswith(reply["content"])


def test_a_double_click_commits_once(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    reply = started(bot)
    cid = payloads.custom_id_of(reply, "ConfirmCurrent")
    twice = [payloads.component(reply, cid, user) for user in (ALICE, SAM)]
    bot.dispatch(*(bot.interaction(data) for data in twice))  # at once
    assert len(team_app.log) == 1
    assert len(discord_api.interactions.callbacks) == 2  # each acknowledged
    bot.click(reply, "ConfirmCurrent", custom_id=cid)  # on the closed message, later
    assert len(team_app.log) == 1
    notices = discord_api.ephemerals()
    assert notices and all(n["flags"] & EPHEMERAL for n in notices)
    assert any("Already done" in n["content"] for n in notices)


def test_a_stale_button_says_so_and_shows_the_current_one(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    first = started(bot)
    bot.say("make it postgres 16 with logical replication")
    bot.click(first, "ConfirmCurrent")
    [notice] = discord_api.ephemerals()
    assert "This suggestion changed" in notice["content"] and "postgres 16" in notice["content"]
    assert payloads.custom_ids(notice)  # the current buttons, for the clicker
    assert len(team_app.log) == 0
    assert discord_api.message(first["id"]).get("edits") is None


def test_buttons_still_work_after_a_restart(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    reply = started(bot)
    bot.close()
    again = DiscordBot(team_app, discord_api)  # a new process: nothing in memory
    try:
        again.click(reply, "ConfirmCurrent", user=SAM)
        assert len(team_app.log) == 1
    finally:
        again.close()


def given_button(
    bot: DiscordBot, message: dict[str, Any], action: str, *, ask: bool = False
) -> dict[str, Any]:
    """``action`` on the message's candidate, a button no beat shows (EndStream: protected
    ``stream.state``, asking first; Shout: rate limited): the message is given one, as if a
    beat had, and comes back as Discord now has it."""
    candidate = payloads.custom_id_of(message, "ConfirmCurrent").split(":")[2:]
    custom_id = ":".join(["dlb", action, *candidate, *(["ask"] if ask else [])])
    with bot.api.lock:
        bot.api.message(message["id"]).update(_with_button(message, custom_id))
    return bot.api.message(message["id"])


def test_a_protected_action_asks_first_and_refuses_a_member(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    reply = given_button(bot, started(bot), "EndStream", ask=True)
    bot.click(reply, "EndStream", user=ALICE)
    [question] = discord_api.ephemerals()
    assert "Sure?" in question["content"] and len(team_app.log) == 0
    [yes] = payloads.custom_ids(question)
    assert not yes.endswith(":ask")
    bot.click(question, "EndStream", user=ALICE)
    denial = discord_api.ephemerals()[-1]
    assert "protected" in denial["content"]
    assert team_app.store.get("stream.state") is None


@pytest.mark.parametrize("moderator", [SAM, RIA, MIA])
def test_a_moderator_by_role_name_id_or_permission_may(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App, moderator: str
) -> None:
    reply = given_button(bot, started(bot), "EndStream", ask=True)
    bot.click(reply, "EndStream", user=moderator)
    [question] = discord_api.ephemerals()
    bot.click(question, "EndStream", user=moderator)
    entry = team_app.store.get("stream.state")
    assert entry is not None and entry.value == "off"
    assert (entry.updated_by.kind, entry.updated_by.id) == (ActorKind.MODERATOR, moderator)
    answered = discord_api.message(question["id"])  # the question says what became of it
    assert closing_lines(answered)[0].startswith("✅") and answered["flags"] & EPHEMERAL
    outcome = discord_api.public()[-1]  # and the channel hears it
    assert outcome["id"] != reply["id"] and "stream.state" in outcome["content"]


def test_an_agent_proposal_is_applied_only_by_a_moderator(
    team_app: App, discord_api: DiscordServer, openai_server: OpenAIServer
) -> None:
    openai_server.answer_with = proposing("stream.state", "off")
    bot = DiscordBot(team_app, discord_api, model=model(openai_server))
    try:
        reply = started(bot)
        apply = payloads.custom_id_of(reply, "ApplyProposal")
        assert apply.endswith(":ask")  # protected: Discord has no confirm dialog, so we ask
        for who in (ALICE, MIA):
            bot.click(reply, "ApplyProposal", user=who)
            bot.click(discord_api.ephemerals()[-1], "ApplyProposal", user=who)
            if who == ALICE:
                assert "protected" in discord_api.ephemerals()[-1]["content"]
                assert team_app.store.get("stream.state") is None
        entry = team_app.store.get("stream.state")
        assert entry is not None and entry.updated_by.id == MIA
    finally:
        bot.close()


def test_a_rate_limited_click_is_refused_to_the_clicker(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    first = started(bot)
    bot.click(given_button(bot, first, "Shout"), "Shout", user=ALICE)
    assert team_app.store.get("shout.last") is not None
    next_steps = discord_api.public()[-1]  # the message closed; what remains comes after
    assert next_steps["content"].startswith("What next?") and payloads.custom_ids(next_steps)
    bot.say("make it postgres 16 with logical replication")
    second = discord_api.public()[-1]
    bot.click(given_button(bot, second, "Shout"), "Shout", user=ALICE)
    [refusal] = discord_api.ephemerals()
    assert refusal["content"].startswith("Not done: too many changes to shout.last; try again")
    assert len(team_app.log) == 1


def slower_than_discord_waits(request: dict[str, Any]) -> Reply:
    """Expanding takes longer than Discord waits for an acknowledgement."""
    reply = slow_expand(request)
    return Reply(reply.content, delay=3.5) if reply.delay else reply


def test_a_slow_click_is_acknowledged_at_once_and_blocks_nobody(
    team_app: App, discord_api: DiscordServer, openai_server: OpenAIServer
) -> None:
    openai_server.answer_with = slower_than_discord_waits
    bot = DiscordBot(team_app, discord_api, model=model(openai_server))
    try:
        reply = started(bot)
        cid = payloads.custom_id_of(reply, "ExpandCurrent")
        click = bot.interaction(payloads.component(reply, cid, ALICE))
        meanwhile = ("MESSAGE_CREATE", payloads.message_create("or sqlite?", channel=THREAD))
        bot.dispatch(click, meanwhile)
        [(_, callback, delay)] = discord_api.interactions.callbacks
        assert callback["type"] == CallbackType.DEFERRED_UPDATE and delay < 3
        closed = discord_api.message(reply["id"])
        assert closing_lines(closed) == [f"↪ <@{ALICE}> chose *Expand*"]
        in_thread = next(m for m in discord_api.public() if m["channel_id"] == THREAD)
        assert in_thread["timestamp"] < closed["edited_timestamp"]  # the loop was free
        expanded = discord_api.public()[-1]
        assert "Expanded." in expanded["content"] and expanded["channel_id"] == CHANNEL
    finally:
        bot.close()


def model(openai_server: OpenAIServer) -> ChatModel:
    client = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    return ChatModel(client, "m", timeout_sec=10)


def test_denials_are_ephemeral_and_change_nothing(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    reply = started(bot)
    cid = payloads.custom_id_of(reply, "ConfirmCurrent")
    elsewhere = cid.replace(f":{CHANNEL}:", f":{OTHER}:")
    forged = [
        payloads.component(_with_button(reply, elsewhere), elsewhere, ALICE),
        payloads.component(
            _with_button(reply, "dlb:ConfirmCurrent:x"), "dlb:ConfirmCurrent:x", ALICE
        ),
        payloads.component(_with_button(reply, "dlb:confirm:1:c:1"), "dlb:confirm:1:c:1", ALICE),
    ]
    bot.dispatch(*(bot.interaction(data) for data in forged))
    notices = discord_api.ephemerals()
    assert len(notices) == 3 and all("nothing was changed" in n["content"] for n in notices)
    assert any("another conversation" in n["content"] for n in notices)
    assert any("not one Deliberate made" in n["content"] for n in notices)
    assert any("not valid" in n["content"] for n in notices)
    assert len(team_app.log) == 0 and discord_api.message(reply["id"]).get("edits") is None


def _with_button(message: dict[str, Any], custom_id: str) -> dict[str, Any]:
    """``message`` as someone tampering with the client would have it: one more button."""
    return message | {"components": [*message["components"], payloads.action_row(custom_id)]}
