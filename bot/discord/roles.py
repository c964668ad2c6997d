"""Who is who on Discord, inside one tenant. The config binds roles to Discord users and role
ids anywhere (``discord:80351110224678912``), and, inside a server's own section, to role
names (``discord:Moderators``) and permissions the member holds in the channel
(``discord:permission:manage_guild``), so a server's own admins need no list. A name or a
permission never counts in another server, and in a direct message nobody holds a role.
Everything comes from Discord's payload (the interaction's member and its permissions, the
message's author): nothing is fetched, nothing blocks."""

from __future__ import annotations

import discord

from bot.chat.people import person
from core.config.roles import PERMISSION, Membership, roles_for
from core.config.tenants import Tenant
from core.state.actor import Actor

from .turns import PLATFORM

__all__ = ["actor_of", "membership_of"]


def membership_of(
    user: discord.User | discord.Member, permissions: discord.Permissions
) -> Membership:
    """The member's roles (ids and names, not @everyone) and the permissions they hold."""
    ids, names = set(), set()
    for role in getattr(user, "roles", []):  # a Member's; a DM's User has none
        if not role.is_default():
            ids.add(str(role.id))
            names.add(role.name)
    names |= {f"{PERMISSION}{name}" for name, held in permissions if held}
    return Membership(PLATFORM, str(user.id), frozenset(ids), frozenset(names))


def actor_of(
    tenant: Tenant, user: discord.User | discord.Member, permissions: discord.Permissions
) -> Actor:
    if tenant.private:
        return person(PLATFORM, str(user.id), ())
    roles = roles_for(tenant.bindings, membership_of(user, permissions))
    return person(PLATFORM, str(user.id), roles, guest=tenant.talk_only and not roles)
