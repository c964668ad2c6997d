"""Who is who on Discord. ``roles:`` in the config names Discord members
(``discord:80351110224678912``) and groups: a server role by name or id
(``discord:Moderators``, ``discord:41771983423143936``), or a permission the member holds in
the channel (``discord:permission:manage_guild``), so a server's own admins need no list.
Everything comes from Discord's payload (the interaction's member and its permissions, the
message's author): nothing is fetched, nothing blocks."""

from __future__ import annotations

from collections.abc import Mapping

import discord

from bot.people import person
from core.config.roles import RoleBinding, roles_for
from core.state.actor import Actor

from .channels import PLATFORM

__all__ = ["actor_of", "groups_of"]

PERMISSION = "permission:"


def groups_of(user: discord.User | discord.Member, permissions: discord.Permissions) -> list[str]:
    """The member's roles (ids and names, not @everyone) and the permissions they hold."""
    groups = []
    for role in getattr(user, "roles", []):  # a Member's; a DM's User has none
        if not role.is_default():
            groups += [str(role.id), role.name]
    groups += [f"{PERMISSION}{name}" for name, held in permissions if held]
    return groups


def actor_of(
    bindings: Mapping[str, RoleBinding],
    user: discord.User | discord.Member,
    permissions: discord.Permissions,
) -> Actor:
    groups = groups_of(user, permissions)
    return person(PLATFORM, str(user.id), roles_for(bindings, PLATFORM, str(user.id), groups))
