"""People on a platform as actors: their roles come from the config (``roles:``), and the
strongest of them names their kind, so a Slack moderator shows as ``moderator:U024BE7LH``."""

from __future__ import annotations

from core.state.actor import Actor, ActorKind

__all__ = ["person"]


def person(platform: str, user_id: str, roles: tuple[str, ...]) -> Actor:
    kind = ActorKind.USER
    if ActorKind.ADMIN.value in roles:
        kind = ActorKind.ADMIN
    elif ActorKind.MODERATOR.value in roles:
        kind = ActorKind.MODERATOR
    return Actor(kind=kind, id=user_id, platform=platform, roles=roles)
