"""Small builders for test data (real models, nothing mocked)."""

from __future__ import annotations

from typing import Any

from core.deliberation.messages import ActionClicked
from core.deliberation.view import View
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


def clicked(view: View, action: str, click_id: str, who: Actor | None = None) -> ActionClicked:
    """A click of ``view``'s ``action`` button, as an adapter sends it (by ``who``: alice)."""
    button = next(b for b in view.buttons if b.action == action)
    return ActionClicked(
        action=action,
        target_id=button.target_id,
        expected_version=button.target_version,
        click_id=click_id,
        actor=who or actor(),
    )
