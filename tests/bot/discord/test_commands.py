"""``/deliberate`` as Discord delivers it: an application command interaction through
discord.py's command tree, answered for the asker alone."""

from __future__ import annotations

from bot.app import App
from tests.bot.discord.payloads import GUILD, SAM
from tests.bot.discord.rig import DiscordBot
from tests.factories import mutation
from tests.servers.discord_api import DiscordServer
from tests.servers.discord_interactions import EPHEMERAL, CallbackType
from tests.servers.discord_markdown import read


def test_the_commands_are_registered_on_the_server(
    discord_api: DiscordServer, bot: DiscordBot
) -> None:
    [command] = discord_api.commands[GUILD]
    assert command["name"] == "deliberate"
    subcommands = {o["name"]: o for o in command["options"]}
    shown = ("state", "log", "why", "help", "show", "topic", "pending", "breakglass")
    assert set(subcommands) == set(shown)
    assert [o["required"] for o in subcommands["why"]["options"]] == [True]


def test_state_log_why_and_help_answer_the_asker_alone(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    team_app.gateway.propose(mutation("set", "decision.db", "postgres", reason="team call"))
    team_app.gateway.propose(mutation("set", "secret.stream-key", "sk-live-123", "admin:root"))
    before = len(team_app.log)
    bot.command("state")
    [(_, callback, delay)] = discord_api.interactions.callbacks
    assert callback == {"type": CallbackType.DEFERRED_MESSAGE, "data": {"flags": EPHEMERAL}}
    assert delay < 3
    state = answer_of(discord_api)
    assert state.startswith("```\n") and 'decision.db = "postgres"' in state
    assert "sk-live-123" not in state and "(secret)" in state
    bot.command("log", key="decision.db", user=SAM)
    assert 'set decision.db "postgres" -> v1' in answer_of(discord_api)
    bot.command("why", key="decision.db")
    assert "by user:alice, reason: team call" in answer_of(discord_api)
    bot.command("help")
    assert "/deliberate why KEY" in answer_of(discord_api)
    bot.command("log", key="not a key!")
    assert "not a key!" in answer_of(discord_api)
    assert len(team_app.log) == before  # reading changes nothing
    assert discord_api.public() == []


def answer_of(discord_api: DiscordServer) -> str:
    """The last command's answer: its ephemeral "thinking…" message, edited once."""
    message = discord_api.messages[-1]
    assert message["flags"] == EPHEMERAL and message["edits"] == 1  # no longer loading
    return str(message["content"])


def test_an_answer_quoting_backticks_stays_in_its_code_block(
    bot: DiscordBot, discord_api: DiscordServer, team_app: App
) -> None:
    """A value holding four backticks ended the answer's code block where it stood (its
    first three were spelled apart, the fourth made a fence with the last two), so that the
    masked link after them was live; every run of backticks is spelled apart now."""
    for ticks in range(2, 8):
        said = "`" * ticks + "[Sign in to Acme Bank](https://evil.example/login) ``"
        team_app.gateway.propose(mutation("set", "decision.db", said, reason="team call"))
        bot.command("state")
        reading = read(answer_of(discord_api))
        assert reading.links == [] and reading.markup == ["```"], (ticks, reading)
        assert 'decision.db = "' in reading.code[0] and "Acme Bank" in reading.code[0]
