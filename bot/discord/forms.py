"""Forms: a button that asks for something before its click is sent (``Button.asks``: a new
value for a proposal, a reason to discard one; the "Break glass" beside a proposal's Apply:
the reason to apply it at once) is answered with a Discord modal (interaction
response type 9) instead of the click; the click goes when the modal is submitted (a
MODAL_SUBMIT interaction), with what was typed as its ``note`` (a break-glass reason: its
``break_glass``).

The modal's custom_id is its button's, ``dlf:`` for ``dlb:`` (``ButtonRef.form_id``): it names
the click, and nothing is kept while the form is open, so a form opened before a restart, or
by another replica, is submitted all the same. Discord sends the submission from the person it
showed the form to, with the clicked message; the submission's interaction id is the click's
id, so the same submission delivered again is the same click. One whose custom_id does not
read (garbled, forged, or naming an action that asks for nothing) is refused and changes
nothing; one that reads is checked as its button's click is."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import discord

from bot.chat.break_glass import FORM_TITLE, GLASS_LABEL, REASON_LABEL
from bot.chat.notices import UNCHANGED
from core.deliberation.actions import ASKS, ActionType
from core.gateway.break_glass import MAX_GLASS_REASON
from core.gateway.edits import MAX_EDIT_CHARS, value_text
from core.gateway.mutation_gateway import MAX_REASON

from .buttons import FORM_TEMPLATE, Asks, ButtonRef

if TYPE_CHECKING:
    from core.runtime.queries import Queries

__all__ = [
    "GARBLED",
    "MAX_NOTE",
    "NOT_OURS",
    "TOO_LONG",
    "Submitted",
    "form_for",
    "prefill_for",
    "read_form",
]

MAX_NOTE = 4000  # what a click carries (ActionClicked.note), and Discord's text inputs
GARBLED = "This form's data is not valid" + UNCHANGED
NOT_OURS = "This form is not one Deliberate made" + UNCHANGED
TOO_LONG = f"What you typed is longer than {MAX_NOTE} characters" + UNCHANGED


@dataclass(frozen=True)
class _Wording:
    title: str  # the modal's (at most 45 characters)
    label: str  # the input's (at most 45)
    description: str  # under it (at most 100)
    clicked: str  # what the clicked message's closing line calls the click


_WORDING: dict[Asks, _Wording] = {
    "value": _Wording(
        "Edit the proposal",
        "New value",
        "Applying it commits this value instead of the one proposed.",
        "Edit",
    ),
    "reason": _Wording(
        "Discard the proposal",
        "Why? (optional)",
        f"Kept with the proposal and told to the assistant; at most {MAX_REASON} characters.",
        "Discard",
    ),
    "glass": _Wording(
        FORM_TITLE,
        REASON_LABEL,
        "Applied at once, skipping approval; logged, announced and listed for review.",
        GLASS_LABEL,
    ),
}
# what an action's button asks for, if anything (Apply: the reason to break the glass)
_ASKED = {**ASKS, ActionType.APPLY_PROPOSAL: "glass"}


@dataclass(frozen=True)
class Submitted:
    """A form as it came back: the click it was opened for, and what was typed (None:
    nothing)."""

    ref: ButtonRef
    note: str | None

    @property
    def label(self) -> str:
        assert self.ref.asks is not None
        return _WORDING[self.ref.asks].clicked


def form_for(ref: ButtonRef, prefill: str = "") -> discord.ui.Modal:
    """The modal a click on ``ref``'s button opens (``ref.asks`` is set): a paragraph for a
    value, typed in already with ``prefill``; a short line for an optional reason; a
    paragraph for the reason to break the glass, required, at most what is kept of it."""
    assert ref.asks is not None
    wording, value, glass = _WORDING[ref.asks], ref.asks == "value", ref.asks == "glass"
    field = discord.ui.TextInput[discord.ui.Modal](
        custom_id=ref.asks,
        style=discord.TextStyle.paragraph if value or glass else discord.TextStyle.short,
        default=prefill[:MAX_EDIT_CHARS] if value and prefill else None,
        required=value or glass,
        min_length=1 if glass else None,
        max_length=MAX_EDIT_CHARS if value else MAX_GLASS_REASON if glass else MAX_REASON,
    )
    modal = discord.ui.Modal(title=wording.title, custom_id=ref.form_id(), timeout=None)
    label = discord.ui.Label[discord.ui.Modal](
        text=wording.label, description=wording.description, component=field
    )
    modal.add_item(label)
    modal.stop()  # not kept by discord.py: the submission is read from its custom_id alone
    return modal


def prefill_for(queries: Queries, ref: ButtonRef) -> str:
    """What a value's form shows typed in already: the proposal's value as applying it would
    write it, as text ("" when there is none, or it is too long to edit). Reads Redis."""
    if ref.asks != "value":
        return ""
    proposal = queries.proposal(ref.target_id)
    if proposal is None or queries.is_secret(proposal.mutation.key):
        return ""  # (a secret key's value is never shown in chat)
    text = value_text(proposal.current_value)
    return text if len(text) <= MAX_EDIT_CHARS else ""


def read_form(data: Mapping[str, Any]) -> Submitted:
    """A MODAL_SUBMIT's ``data`` read back; ValueError saying, to the person who submitted
    it, why it is refused."""
    match = FORM_TEMPLATE.fullmatch(str(data.get("custom_id") or ""))
    if match is None:
        raise ValueError(NOT_OURS)
    try:
        ref = ButtonRef.of(match)
    except ValueError:
        raise ValueError(GARBLED) from None
    if ref.asks is None or _ASKED.get(ref.action) != ref.asks:
        raise ValueError(NOT_OURS)
    typed = _typed(data.get("components"), ref.asks)
    if typed is None:
        raise ValueError(GARBLED)
    if len(typed) > MAX_NOTE:
        raise ValueError(TOO_LONG)
    return Submitted(ref, typed if typed.strip() else None)


def _typed(components: Any, custom_id: str) -> str | None:
    """The value of the text input ``custom_id``: in a Label (type 18, as this adapter sends
    it) or an action row (type 1, as Discord used to have them)."""
    if not isinstance(components, list):
        return None
    for component in components:
        if not isinstance(component, dict):
            continue
        kind = component.get("type")
        inner = (
            component.get("components")
            if kind == 1
            else [component.get("component")]
            if kind == 18
            else None
        )
        if inner is not None:
            found = _typed(inner, custom_id)
            if found is not None:
                return found
        elif kind == 4 and component.get("custom_id") == custom_id:
            value = component.get("value")
            return value if isinstance(value, str) else None
    return None
