"""People on a platform as actors: their roles come from the config (``roles:``, and the
tenant's own), and the strongest of them names their kind, so a Slack moderator shows as
``moderator:U024BE7LH``. A guest (another organisation's user, a talk-only member) holds no
role. A person at this machine's command line or console is ``local:NAME`` (``local_person``),
with the roles ``roles:`` binds to ``local:NAME``, as a Slack or Discord member gets theirs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from core.state.actor import Actor, ActorKind

if TYPE_CHECKING:
    from core.config.roles import RoleBinding

__all__ = ["LOCAL", "NAME_RULE", "local_name", "local_person", "person"]

LOCAL = "local"  # the platform of the command line and the console
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}")
NAME_RULE = "1 to 64 letters, digits and . _ @ + - (starting with a letter or digit), e.g. lena"


def person(platform: str, user_id: str, roles: tuple[str, ...], *, guest: bool = False) -> Actor:
    kind = ActorKind.USER
    if guest:
        return Actor(kind=ActorKind.GUEST, id=user_id, platform=platform)
    if ActorKind.ADMIN.value in roles:
        kind = ActorKind.ADMIN
    elif ActorKind.MODERATOR.value in roles:
        kind = ActorKind.MODERATOR
    return Actor(kind=kind, id=user_id, platform=platform, roles=roles)


def local_name(text: str) -> str:
    """The NAME of ``NAME`` or ``local:NAME``, as a config binds it (``local:lena``); a
    ValueError says what a name may hold."""
    name = text.removeprefix(f"{LOCAL}:")
    if _NAME.fullmatch(name) is None:
        raise ValueError(f"{text!r} is not a person's name here: {NAME_RULE}")
    return name


def local_person(bindings: Mapping[str, RoleBinding], name: str) -> Actor:
    """``local:NAME`` (``name`` as ``local_name`` reads it) with the roles ``bindings`` give
    that member; none of a group (a local person belongs to none)."""
    from core.config.roles import Membership, roles_for  # a model: not for a command that reads

    name = local_name(name)
    return person(LOCAL, name, roles_for(bindings, Membership(LOCAL, name)))
