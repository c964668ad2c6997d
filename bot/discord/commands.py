"""``/deliberate state|log|why|help``: Slack's slash command as Discord app commands, one
subcommand each so Discord shows their options; the answers are the same (``bot.answers``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import discord
from discord import app_commands

__all__ = ["deliberate_commands"]

Answer = Callable[[discord.Interaction[Any], str], Awaitable[None]]


def deliberate_commands(answer: Answer) -> app_commands.Group:
    group = app_commands.Group(
        name="deliberate",
        description="Read what Deliberate has decided; answers are shown to you alone",
    )

    @group.command(name="state", description="Live state, or the keys starting with PREFIX")
    @app_commands.describe(prefix="only keys starting with this, e.g. decision.")
    async def state(interaction: discord.Interaction[Any], prefix: str = "") -> None:
        await answer(interaction, f"state {prefix}")

    @group.command(name="log", description="The newest committed changes, or those of KEY")
    @app_commands.describe(key="only changes of this key, e.g. scene.name")
    async def log(interaction: discord.Interaction[Any], key: str = "") -> None:
        await answer(interaction, f"log {key}")

    @group.command(name="why", description="Who set KEY and why, and what rules did with it")
    @app_commands.describe(key="the state key, e.g. decision.db-engine")
    async def why(interaction: discord.Interaction[Any], key: str) -> None:
        await answer(interaction, f"why {key}")

    @group.command(name="help", description="What /deliberate can tell you")
    async def help_(interaction: discord.Interaction[Any]) -> None:
        await answer(interaction, "help")

    return group
