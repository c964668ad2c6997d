"""Small builders for test data (real models, nothing mocked)."""

from __future__ import annotations

from typing import Any

from core.state.actor import Actor
from core.state.mutation import Mutation, Op


def actor(text: str = "user:alice", *roles: str) -> Actor:
    parsed = Actor.parse(text)
    return parsed.model_copy(update={"roles": roles}) if roles else parsed


def mutation(
    op: str, key: str, value: Any = None, who: str | Actor = "user:alice", **fields: Any
) -> Mutation:
    author = who if isinstance(who, Actor) else actor(who)
    return Mutation(op=Op(op), key=key, value=value, actor=author, **fields)
