"""What a Slack button carries: its ``action_id`` is our prefix plus the action type and its
position (and, for a button that asks for something first, what it asks: ``value``,
``reason``, or ``glass`` for the "Break glass" beside a proposal's Apply; see ``forms.py``),
its ``value`` the session, the candidate (or proposal) id and the expected version. Nothing
else: the click handler reloads state and checks the rest. Anything that does not parse is
refused, and so is any spelling but the one made here (``007``, ``true`` or ``"7"`` for a
version, spaces, keys in another order): one button, one spelling."""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.deliberation.actions import ACTION_NAME, ActionType
from core.deliberation.messages import ID_PATTERN
from core.deliberation.view import Button

from .turns import SESSION

__all__ = [
    "ACTION_ID",
    "ButtonRef",
    "action_id",
    "button_value",
    "glass_action_id",
    "parse_button",
]

PREFIX = "deliberate:"
ACTION_ID = re.compile(r"^deliberate:")  # what the click listener matches
# fullmatch: the action, its position, what it asks for first (if anything)
_ACTION_ID = re.compile(
    r"deliberate:([A-Za-z0-9]{1,40}):(0|[1-9][0-9]{0,2})(?::(value|reason|glass))?"
)


class ButtonRef(BaseModel):
    """A click's identification, as read back from Slack."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: str = Field(pattern=ACTION_NAME)
    session: str = Field(alias="s")
    target_id: str = Field(alias="t", pattern=ID_PATTERN)
    version: int = Field(alias="v", ge=0)
    position: int = Field(default=0, ge=0)  # in its message: from the action id
    asks: Literal["value", "reason", "glass"] | None = None  # a form first: from the action id

    @model_validator(mode="after")
    def _glass_on_apply(self) -> ButtonRef:
        if self.asks == "glass" and self.action != ActionType.APPLY_PROPOSAL:
            raise ValueError("only a proposal's Apply breaks the glass")
        return self

    def value(self) -> str:
        return _value(self.session, self.target_id, self.version)

    def action_id(self) -> str:
        return _action_id(self.action, self.position, self.asks)


def action_id(button: Button, position: int) -> str:
    """Slack wants action ids unique within a message: the position keeps them apart."""
    return _action_id(button.action, position, button.asks)


def glass_action_id(button: Button, position: int) -> str:
    """The "Break glass" beside the Apply button at ``position``."""
    return _action_id(button.action, position, "glass")


def _action_id(action: str, position: int, asks: str | None) -> str:
    return f"{PREFIX}{action}:{position}" + (f":{asks}" if asks else "")


def button_value(session_id: str, button: Button) -> str:
    return _value(session_id, button.target_id, button.target_version)


def _value(session_id: str, target_id: str, version: int) -> str:
    # compact: Slack allows 2000 characters, and session ids are at most 200
    ref = {"s": session_id, "t": target_id, "v": version}
    return json.dumps(ref, separators=(",", ":"))


def parse_button(action_id_text: str, value: str | None) -> ButtonRef:
    """The button behind a click; ValueError when it is not one of ours or was tampered with."""
    matched = _ACTION_ID.fullmatch(action_id_text or "")
    if matched is None or not value:
        raise ValueError("this button is not one Deliberate made")
    try:
        data = json.loads(value)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        ref = ButtonRef.model_validate(
            {
                **data,
                "action": matched.group(1),
                "position": int(matched.group(2)),
                "asks": matched.group(3),
            }
        )
        if not SESSION.match(ref.session):
            raise ValueError("not a Slack thread's session")
        if ref.value() != value:
            raise ValueError("not spelled as Deliberate spells it")
    except (ValidationError, ValueError, RecursionError):  # JSONDecodeError is a ValueError
        raise ValueError("this button's data is not valid") from None
    return ref
