"""Who asks for a change: a person (a guest too), the model, an automation, a connector or the
system."""

from __future__ import annotations

from enum import StrEnum
from functools import cached_property

from pydantic import ConfigDict, Field

from core.cached_models import Derived

__all__ = ["PERSON_KINDS", "Actor", "ActorKind"]


class ActorKind(StrEnum):
    USER = "user"
    GUEST = "guest"  # a person from outside the tenant (Slack Connect), or talk-only member
    MODERATOR = "moderator"
    ADMIN = "admin"
    AGENT = "agent"
    AUTOMATION = "automation"
    CONNECTOR = "connector"
    SYSTEM = "system"


PERSON_KINDS = frozenset({ActorKind.USER, ActorKind.GUEST, ActorKind.MODERATOR, ActorKind.ADMIN})


class Actor(Derived):
    """An actor; its kind counts as one of its roles, so `moderator:alice` is a moderator."""

    model_config = ConfigDict(frozen=True)

    kind: ActorKind
    id: str = Field(min_length=1, max_length=128)
    platform: str = Field(default="local", min_length=1, max_length=32)
    roles: tuple[str, ...] = ()

    @cached_property
    def effective_roles(self) -> frozenset[str]:
        return frozenset(self.roles) | {self.kind.value}

    @cached_property
    def json_text(self) -> str:
        return self.model_dump_json()

    @property
    def identity(self) -> str:
        """Stable identity of the party behind the actor (rate limits count per identity)."""
        return f"{self.platform}:{self.id}"

    @property
    def is_person(self) -> bool:
        return self.kind in PERSON_KINDS

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.id}"

    @classmethod
    def parse(cls, text: str, *, platform: str = "local") -> Actor:
        """Parse ``KIND:ID`` as typed on the command line."""
        kind, sep, ident = text.partition(":")
        if not sep or not ident:
            raise ValueError(f"actor {text!r} must look like KIND:ID, e.g. user:alice")
        try:
            actor_kind = ActorKind(kind)
        except ValueError:
            kinds = ", ".join(k.value for k in ActorKind)
            raise ValueError(f"actor kind {kind!r} is not one of: {kinds}") from None
        return cls(kind=actor_kind, id=ident, platform=platform)
