"""Who is signed in: a person of Slack or Discord with the actor they are in each workspace
they belong to (their roles read as chat reads them, at sign-in), or the operator (reads
every workspace, acts in none). Sessions live in Redis under a hash of a random token, which
the signed cookie carries: signing out ends one everywhere, and they lapse after eight hours
(roles are read again at the next sign-in)."""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.redis.client import RedisClient
from core.state.actor import Actor

__all__ = ["OPERATOR", "Sessions", "SignedIn"]

OPERATOR = "operator"


@dataclass(frozen=True)
class SignedIn:
    """``access``: workspace -> the actor this person is there. The operator has none: it
    reads every workspace and acts in none (``read_only``)."""

    platform: str
    user_id: str
    name: str
    access: Mapping[str, Actor] = field(default_factory=dict)

    @property
    def read_only(self) -> bool:
        return self.platform == OPERATOR

    @property
    def label(self) -> str:
        return "operator (read-only)" if self.read_only else f"{self.name} ({self.platform})"

    def actor_in(self, workspace: str) -> Actor | None:
        return self.access.get(workspace)

    def to_json(self) -> str:
        return json.dumps(
            {
                "platform": self.platform,
                "userId": self.user_id,
                "name": self.name,
                "access": {ws: a.model_dump(mode="json") for ws, a in self.access.items()},
            }
        )

    @classmethod
    def from_json(cls, text: str) -> SignedIn:
        data: dict[str, Any] = json.loads(text)
        access = {ws: Actor.model_validate(a) for ws, a in data["access"].items()}
        return cls(str(data["platform"]), str(data["userId"]), str(data["name"]), access)

    @classmethod
    def operator(cls) -> SignedIn:
        return cls(OPERATOR, OPERATOR, "operator")


class Sessions:
    def __init__(self, redis: RedisClient, ttl_sec: int) -> None:
        self.redis = redis
        self.ttl_sec = ttl_sec

    def start(self, person: SignedIn) -> str:
        """A new session's token (for the cookie)."""
        token = secrets.token_urlsafe(32)
        self.redis.set(self._key(token), person.to_json(), ex=self.ttl_sec)
        return token

    def get(self, token: str | None) -> SignedIn | None:
        if not token:
            return None
        raw = self.redis.get(self._key(token))
        if raw is None:
            return None
        return SignedIn.from_json(raw.decode() if isinstance(raw, bytes) else str(raw))

    def end(self, token: str | None) -> None:
        if token:
            self.redis.delete(self._key(token))

    @staticmethod
    def _key(token: str) -> str:
        return "{deliberate}:web:session:" + hashlib.sha256(token.encode()).hexdigest()
