"""What the rule workers need of a connector, and nothing more: a named action with typed
arguments, a run that returns a JSON result, and optionally a way to tell whether its effect
is already in place. ``connectors/`` implements it; the rule engine never imports a
connector (nor the platform SDKs they use), it is handed a registry."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, JsonValue

from core.redaction import Redactor

__all__ = ["ActionContext", "ActionRegistry", "ConnectorAction", "ConnectorError"]


class ConnectorError(Exception):
    """A connector's failure, in the connector's own words (never with a credential in them).
    ``retryable``: the same call may succeed later (a timeout, a 5xx, a rate limit)."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.retryable = retryable


@dataclass(frozen=True)
class ActionContext:
    """``idempotency_key``: the same for every attempt at one step of one firing (mutation id,
    rule id, step); a connector whose remote side understands such a key sends it.
    ``env``: where credentials come from (the process environment unless a test says
    otherwise); a connector reads its credentials from here and nowhere else.
    ``redactor``: strikes out the secrets the step sent (a secret key's values its arguments
    carry, the environment's values): a connector passes what it quotes of an answer through
    it before cutting or joining anything, and its own credentials too."""

    idempotency_key: str
    correlation_id: str
    env: Mapping[str, str] = field(default_factory=dict)
    redactor: Redactor = field(default_factory=Redactor)


Run = Callable[[Any, ActionContext], JsonValue]
Reconcile = Callable[[Any, ActionContext], bool]


@dataclass(frozen=True)
class ConnectorAction:
    """One named action (``obs.setScene``). ``args`` validates the rendered arguments.
    ``reconcile`` answers whether the effect is already in place (the scene is already the
    one asked for): after a worker died in the middle of this step, the retry asks it
    instead of acting twice. ``resend_safe``: the remote side drops a repeat carrying the same
    idempotency key, so such a retry may simply send again. An action with neither is not
    repeated (at most once). ``escape``: how the values a rule's template interpolates into
    its arguments are written (people's words stay text: no mention, no disguised link).
    ``shown_to_people``: what it sends is read in a chat (a channel, a stream's chat), where
    no secret key's value is ever shown: its templates read such a value as ``(secret)``."""

    name: str
    args: type[BaseModel]
    run: Run
    description: str
    reconcile: Reconcile | None = None
    resend_safe: bool = False
    escape: Callable[[str], str] | None = None
    shown_to_people: bool = False


class ActionRegistry:
    """The named actions a worker can run."""

    def __init__(self, actions: Iterable[ConnectorAction] = ()) -> None:
        self._actions: dict[str, ConnectorAction] = {}
        for action in actions:
            self.add(action)

    def add(self, action: ConnectorAction) -> None:
        if action.name in self._actions:
            raise ValueError(f"action {action.name} is registered twice")
        self._actions[action.name] = action

    def get(self, name: str) -> ConnectorAction:
        try:
            return self._actions[name]
        except KeyError:
            raise KeyError(
                f"no action {name!r}; known: {', '.join(self.names()) or 'none'}"
            ) from None

    def names(self) -> list[str]:
        return sorted(self._actions)

    def __contains__(self, name: object) -> bool:
        return name in self._actions
