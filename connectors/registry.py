"""Every action the connectors offer, in one registry for the rule workers."""

from __future__ import annotations

from rules.connector_api import ActionRegistry

from . import discord, log, obs, slack, twitch, webhook

__all__ = ["default_registry"]


def default_registry() -> ActionRegistry:
    return ActionRegistry(
        [
            *obs.ACTIONS,
            *twitch.ACTIONS,
            *webhook.ACTIONS,
            *slack.ACTIONS,
            *discord.ACTIONS,
            *log.ACTIONS,
        ]
    )
