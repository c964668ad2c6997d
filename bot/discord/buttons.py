"""What a Discord button carries: its ``custom_id`` is ``dlb:ACTION:CHANNEL:TARGET:VERSION``
(the action type, the session's channel or thread, the candidate or proposal id and the
expected version), with ``:ask`` on a button that asks before acting, or ``:value`` /
``:reason`` on one that asks for something first (a form, see ``forms``), ``:glass`` on the
"Break glass" beside a proposal's Apply (a form asking why). Nothing else: the
click handler reloads state and checks the rest. The buttons are ``DynamicItem``s, so any
message's buttons work after a restart: discord.py matches the template, whatever process
sent them. A form's ``custom_id`` is its button's, ``dlf:`` in place of ``dlb:``."""

from __future__ import annotations

import re
from typing import Any, Literal, Protocol

import discord
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.deliberation.actions import ACTION_NAME, ActionType
from core.deliberation.messages import ID_PATTERN
from core.deliberation.view import Button

from .turns import channel_of, session_id

__all__ = [
    "FORM_PREFIX",
    "FORM_TEMPLATE",
    "MAX_CUSTOM_ID",
    "TEMPLATE",
    "Asks",
    "ButtonRef",
    "Clicks",
    "DeliberateButton",
    "custom_id",
    "glass_id",
]

MAX_CUSTOM_ID = 100  # Discord's limit, on a button's custom_id and on a modal's
PREFIX, FORM_PREFIX = "dlb:", "dlf:"
# ids are printable without spaces (core.deliberation.messages.ID_PATTERN); here without ":" either
_FIELDS = (
    r"(?P<action>[A-Za-z0-9]{1,40}):(?P<channel>[0-9]{1,20})"
    r":(?P<target>[\x21-\x39\x3b-\x7e]{1,100}):(?P<version>[0-9]{1,10})"
)
TEMPLATE = re.compile(PREFIX + _FIELDS + r"(?P<ask>:ask|:value|:reason|:glass)?")
FORM_TEMPLATE = re.compile(FORM_PREFIX + _FIELDS + r"(?P<ask>:value|:reason|:glass)")
Asks = Literal["value", "reason", "glass"]
_ASKS: dict[str, Asks] = {":value": "value", ":reason": "reason", ":glass": "glass"}


class ButtonRef(BaseModel):
    """A click's identification, as read back from Discord."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: str = Field(pattern=ACTION_NAME)
    session: str
    target_id: str = Field(pattern=ID_PATTERN)
    version: int = Field(ge=0)
    ask: bool = False  # the first click of a button that asks before acting
    asks: Asks | None = None  # what its form asks for: a button that opens one, a form

    @model_validator(mode="after")
    def _one_question(self) -> ButtonRef:
        if self.ask and self.asks is not None:
            raise ValueError("a button asks to confirm or opens a form, not both")
        if self.asks == "glass" and self.action != ActionType.APPLY_PROPOSAL:
            raise ValueError("only a proposal's Apply breaks the glass")
        return self

    @classmethod
    def of(cls, match: re.Match[str]) -> ButtonRef:
        """ValueError when the fields, though shaped right, are not valid, or are not spelled
        as ``custom_id`` (or, for a form's match, ``form_id``) spells them."""
        suffix = match["ask"] or ""
        try:
            ref = cls(
                action=match["action"],
                session=session_id(int(match["channel"])),
                target_id=match["target"],
                version=int(match["version"]),
                ask=suffix == ":ask",
                asks=_ASKS.get(suffix),
            )
            # 007 for 7, 0 for a channel: one button, one spelling
            spelled = ref.form_id() if match.re is FORM_TEMPLATE else ref.custom_id()
        except (ValidationError, ValueError):
            raise ValueError("this button's data is not valid") from None
        if spelled != match[0]:
            raise ValueError("this button's data is not valid")
        return ref

    @property
    def channel_id(self) -> int:
        return channel_of(self.session)

    def custom_id(self) -> str:
        return self._spelled(PREFIX, TEMPLATE)

    def form_id(self) -> str:
        """The custom_id of the form this button opens (ValueError: it opens none)."""
        if self.asks is None:
            raise ValueError(f"{self.action} asks for nothing: it opens no form")
        return self._spelled(FORM_PREFIX, FORM_TEMPLATE)

    def _spelled(self, prefix: str, template: re.Pattern[str]) -> str:
        ask = ":ask" if self.ask else f":{self.asks}" if self.asks else ""
        text = f"{prefix}{self.action}:{self.channel_id}:{self.target_id}:{self.version}{ask}"
        if len(text) > MAX_CUSTOM_ID or template.fullmatch(text) is None:
            raise ValueError(f"{text!r} is not a custom_id Discord takes ({MAX_CUSTOM_ID} chars)")
        return text


def custom_id(session: str, button: Button, *, ask: bool = False) -> str:
    """ValueError when it cannot be one (too long, or an id holding ':'). A button that asks
    for something (``Button.asks``) opens its form rather than asking to confirm."""
    ref = ButtonRef(
        action=button.action,
        session=session,
        target_id=button.target_id,
        version=button.target_version,
        ask=ask and button.asks is None,
        asks=button.asks,
    )
    return ref.custom_id()


def glass_id(session: str, button: Button) -> str:
    """The custom_id of the "Break glass" beside ``button``, a proposal's Apply (ValueError
    as ``custom_id``)."""
    ref = ButtonRef(
        action=button.action,
        session=session,
        target_id=button.target_id,
        version=button.target_version,
        asks="glass",
    )
    return ref.custom_id()


class Clicks(Protocol):
    """Who handles a click: the adapter, reached through the client."""

    async def on_click(
        self, interaction: discord.Interaction[Any], ref: ButtonRef | None, label: str
    ) -> None: ...


class DeliberateButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=TEMPLATE):
    """One of our buttons; ``ref`` is None when its custom_id has our shape but bad fields
    (the click handler says so to the clicker rather than letting the click fail silently)."""

    def __init__(
        self, item: discord.ui.Button[Any], ref: ButtonRef | None, *, row: int | None = None
    ) -> None:
        super().__init__(item, row=row)
        self.ref = ref

    @classmethod
    def made(
        cls,
        label: str,
        style: discord.ButtonStyle,
        custom_id: str,
        *,
        row: int | None = None,
        disabled: bool = False,
    ) -> DeliberateButton:
        """A button to send (its click is parsed again when it comes back)."""
        item = discord.ui.Button[discord.ui.View](
            label=label, style=style, custom_id=custom_id, disabled=disabled
        )
        return cls(item, None, row=row)

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> DeliberateButton:
        try:
            ref: ButtonRef | None = ButtonRef.of(match)
        except ValueError:
            ref = None
        if not isinstance(item, discord.ui.Button):  # discord.py logs it and drops the click
            raise TypeError(f"{match.string!r} is a button's custom_id, not a {item.type}'s")
        return cls(item, ref)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        clicks: Clicks = interaction.client.adapter  # see client.DeliberateClient
        await clicks.on_click(interaction, self.ref, self.item.label or "")
