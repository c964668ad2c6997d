"""Platform identities mapped to roles (e.g. who is a moderator), from the config file."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel, ConfigDict

__all__ = ["RoleBinding", "roles_for"]


class RoleBinding(BaseModel):
    """``members``: ``platform:user-id`` (``slack:U024BE7LH``, ``discord:80351110224678912``);
    ``groups``: ``platform:group`` (a Slack user-group handle or id, a Discord role name or id)."""

    model_config = ConfigDict(extra="forbid")

    members: list[str] = []
    groups: list[str] = []


def roles_for(
    bindings: Mapping[str, RoleBinding],
    platform: str,
    user_id: str,
    groups: Iterable[str] = (),
) -> tuple[str, ...]:
    """The roles a platform user holds, in config order."""
    member = f"{platform}:{user_id}"
    their_groups = {f"{platform}:{g}" for g in groups}
    return tuple(
        role
        for role, binding in bindings.items()
        if member in binding.members or their_groups.intersection(binding.groups)
    )
