"""One Discord request, resolved once (``Visit``): the tenant it reaches (a server's own, or
a direct message's private one; None for one the bot does not serve) and the person acting,
with their roles there. discord.py has no middleware: the first handler to ask for an
interaction's visit makes it and keeps it in ``interaction.extras`` (discord.py's place for
what a handler works out), as the Slack side keeps its own in Bolt's context; a message's is
made once where the message comes in. Handlers never work the tenant or the actor out
again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import discord

from bot.chat.notices import NO_DMS, not_served
from core.config.tenants import Tenant
from core.state.actor import Actor

from .roles import actor_of

if TYPE_CHECKING:
    from bot.app import App
    from bot.chat.workspaces import Workspaces
    from core.runtime.runner import Runtime

__all__ = ["NOT_SERVED", "Visit", "visit_of_interaction", "visit_of_message"]

NOT_SERVED = not_served("server")
VISIT = "deliberate_visit"  # where an interaction's Visit is kept in its extras


@dataclass(frozen=True)
class Visit:
    workspaces: Workspaces
    tenant: Tenant | None  # None: a server, or a DM, the bot does not serve
    actor: Actor | None  # the person acting (None where there is no tenant)
    direct: bool  # a direct message, not a server's channel

    @property
    def refusal(self) -> str:
        """Why nothing is done for a request the bot does not serve."""
        return NO_DMS if self.direct else NOT_SERVED

    @property
    def served(self) -> Tenant:
        """The tenant, for a request the bot serves."""
        if self.tenant is None:
            raise LookupError("the bot does not serve this request's server or DM")
        return self.tenant

    @property
    def person(self) -> Actor:
        """The person acting, for a request the bot serves."""
        if self.actor is None:
            raise LookupError("the bot does not serve this request's server or DM")
        return self.actor

    def app(self) -> App:
        """The tenant's workspace (blocking: from a worker thread)."""
        return self.workspaces.app(self.served)

    def runtime(self) -> Runtime:
        """The tenant's runtime (blocking: from a worker thread)."""
        return self.workspaces.runtime(self.served)


def _visit(
    workspaces: Workspaces,
    guild_id: int | None,
    user: discord.User | discord.Member,
    permissions: discord.Permissions,
) -> Visit:
    tenancy = workspaces.tenancy
    tenant = tenancy.discord_dm(user.id) if guild_id is None else tenancy.discord_server(guild_id)
    actor = actor_of(tenant, user, permissions) if tenant is not None else None
    return Visit(workspaces, tenant, actor, direct=guild_id is None)


def visit_of_interaction(workspaces: Workspaces, interaction: discord.Interaction[Any]) -> Visit:
    """The interaction's Visit: made by the first handler that asks, kept for the rest."""
    kept = interaction.extras.get(VISIT)
    if isinstance(kept, Visit):
        return kept
    made = _visit(workspaces, interaction.guild_id, interaction.user, interaction.permissions)
    interaction.extras[VISIT] = made
    return made


def visit_of_message(workspaces: Workspaces, message: discord.Message) -> Visit:
    guild_id = message.guild.id if message.guild else None
    return _visit(workspaces, guild_id, message.author, _permissions_in(message))


def _permissions_in(message: discord.Message) -> discord.Permissions:
    """The author's permissions where they spoke (overwrites included)."""
    author, channel = message.author, message.channel
    if isinstance(author, discord.Member) and hasattr(channel, "permissions_for"):
        return channel.permissions_for(author)
    return discord.Permissions.none()
