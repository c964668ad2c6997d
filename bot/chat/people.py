"""People on a platform as actors: their roles come from the config (``roles:``, and the
tenant's own), and the strongest of them names their kind, so a Slack moderator shows as
``moderator:U024BE7LH``. A guest (another organisation's user, a talk-only member) holds no
role."""

from __future__ import annotations

from core.state.actor import Actor, ActorKind

__all__ = ["person"]


def person(platform: str, user_id: str, roles: tuple[str, ...], *, guest: bool = False) -> Actor:
    kind = ActorKind.USER
    if guest:
        return Actor(kind=ActorKind.GUEST, id=user_id, platform=platform)
    if ActorKind.ADMIN.value in roles:
        kind = ActorKind.ADMIN
    elif ActorKind.MODERATOR.value in roles:
        kind = ActorKind.MODERATOR
    return Actor(kind=kind, id=user_id, platform=platform, roles=roles)
