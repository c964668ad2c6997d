"""``/deliberate state|log|why|pending|help``: Slack's slash command as Discord app commands,
one subcommand each so Discord shows their options; the answers are the same
(``bot.chat.answers``), and so is ``breakglass PROPOSAL@REVISION REASON``
(``bot.chat.break_glass``).
And two that act on this channel's session: ``show`` (what is on the table, with its
buttons, for the asker alone) and ``topic NAME`` (name what the session decides)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import discord
from discord import app_commands

from core.gateway.break_glass import MAX_GLASS_REASON

__all__ = ["deliberate_commands"]

Answer = Callable[[discord.Interaction[Any], str], Awaitable[None]]
# the channel's session: None shows it, a name renames its topic
OnSession = Callable[[discord.Interaction[Any], str | None], Awaitable[None]]


def deliberate_commands(answer: Answer, session: OnSession) -> app_commands.Group:
    group = app_commands.Group(
        name="deliberate",
        description="Read what Deliberate has decided; answers are shown to you alone",
    )

    @group.command(name="state", description="Live state, or the keys starting with PREFIX")
    @app_commands.describe(
        prefix="only keys starting with this, e.g. decision.",
        after="the keys after this one (the answer names it when there are more)",
    )
    async def state(
        interaction: discord.Interaction[Any], prefix: str = "", after: str = ""
    ) -> None:
        await answer(interaction, f"state {prefix}" + (f" --after {after}" if after else ""))

    @group.command(name="log", description="The newest committed changes, or those of KEY")
    @app_commands.describe(key="only changes of this key, e.g. scene.name")
    async def log(interaction: discord.Interaction[Any], key: str = "") -> None:
        await answer(interaction, f"log {key}")

    @group.command(name="why", description="Who set KEY and why, and what rules did with it")
    @app_commands.describe(key="the state key, e.g. decision.db-engine")
    async def why(interaction: discord.Interaction[Any], key: str) -> None:
        await answer(interaction, f"why {key}")

    @group.command(name="pending", description="The proposals that wait for someone to apply")
    async def pending(interaction: discord.Interaction[Any]) -> None:
        await answer(interaction, "pending")

    @group.command(
        name="breakglass",
        description="Apply a pending proposal at once, if you hold its key's break-glass role",
    )
    @app_commands.describe(
        proposal="its id@revision (the value you saw), as /deliberate pending lists it",
        reason="why it cannot wait: logged, announced and listed for review",
    )
    async def breakglass(
        interaction: discord.Interaction[Any],
        proposal: app_commands.Range[str, 1, 100],
        reason: app_commands.Range[str, 1, MAX_GLASS_REASON],
    ) -> None:
        await answer(interaction, f"breakglass {proposal} {reason}")

    @group.command(name="show", description="What is on the table here, with its buttons")
    async def show(interaction: discord.Interaction[Any]) -> None:
        await session(interaction, None)

    @group.command(name="topic", description="Name what this conversation decides")
    @app_commands.describe(
        name="e.g. billing database: Use this then decides decision.billing-database"
    )
    async def topic(
        interaction: discord.Interaction[Any], name: app_commands.Range[str, 1, 200]
    ) -> None:
        await session(interaction, name)

    @group.command(name="help", description="What /deliberate can tell you")
    async def help_(interaction: discord.Interaction[Any]) -> None:
        await answer(interaction, "help")

    return group
