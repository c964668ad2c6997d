"""Platform identities mapped to roles (who is a moderator), from the config file.

An id names one thing everywhere: a Slack user (``slack:U024BE7LH``) or user group
(``slack:S0614TZR7``), a Discord user or role (``discord:41771983423143936``). A *name* does
not: anyone can make a Discord role called "Moderators", or a permission, in a server of
their own. So a binding by name or permission (``discord:Moderators``,
``discord:permission:manage_guild``, a Slack group handle ``slack:mods``) is only accepted
inside one tenant's section of the config (``tenants:``), where it counts in that server or
team alone; the top-level ``roles:`` takes ids only."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

__all__ = [
    "PERMISSION",
    "PLATFORMS",
    "Membership",
    "RoleBinding",
    "is_id",
    "merge_bindings",
    "name_entries",
    "roles_for",
]

PERMISSION = "permission:"
PLATFORMS = ("discord", "slack", "local")  # what a binding may name
# what an id looks like on each platform; anything else in a group entry is a name
_IDS = {
    "discord": re.compile(r"^[0-9]{15,21}$"),
    "slack": re.compile(r"^[SUW][A-Z0-9]{2,20}$"),
}


class RoleBinding(BaseModel):
    """``members``: ``platform:user-id``; ``groups``: ``platform:group``, a group's id anywhere,
    or (inside a tenant's section only) a Discord role name, ``permission:NAME`` or a Slack
    user group handle."""

    model_config = ConfigDict(extra="forbid")

    members: list[str] = []
    groups: list[str] = []


@dataclass(frozen=True)
class Membership:
    """What a platform says about a person where they acted: their id, the ids of their
    groups (roles, user groups) and their names (role names, handles, ``permission:NAME``)."""

    platform: str
    user_id: str
    group_ids: frozenset[str] = frozenset()
    group_names: frozenset[str] = frozenset()


def is_id(platform: str, text: str) -> bool:
    """Whether ``text`` (after ``platform:``) is an id on that platform, not a name. Platforms
    without a known id shape (``local``) have no names."""
    shape = _IDS.get(platform)
    return shape is None or bool(shape.match(text))


def name_entries(binding: RoleBinding) -> list[tuple[int, str]]:
    """The group entries of ``binding`` that are names or permissions, with their index."""
    found = []
    for index, entry in enumerate(binding.groups):
        platform, _, group = entry.partition(":")
        if not is_id(platform, group):
            found.append((index, entry))
    return found


def merge_bindings(*layers: Mapping[str, RoleBinding]) -> dict[str, RoleBinding]:
    """Each role's members and groups from every layer (the global one, a tenant's own)."""
    merged: dict[str, RoleBinding] = {}
    for layer in layers:
        for role, binding in layer.items():
            had = merged.get(role, RoleBinding())
            merged[role] = RoleBinding(
                members=had.members + binding.members, groups=had.groups + binding.groups
            )
    return merged


def roles_for(bindings: Mapping[str, RoleBinding], who: Membership) -> tuple[str, ...]:
    """The roles ``who`` holds, in config order. An id entry matches ids only and a name entry
    names only, so a role *named* like another role's id gains nothing."""
    member = f"{who.platform}:{who.user_id}"
    return tuple(
        role for role, binding in bindings.items() if member in binding.members or _in(binding, who)
    )


def _in(binding: RoleBinding, who: Membership) -> bool:
    for entry in binding.groups:
        platform, _, group = entry.partition(":")
        if platform != who.platform:
            continue
        held: Iterable[str] = who.group_ids if is_id(platform, group) else who.group_names
        if group in held:
            return True
    return False
