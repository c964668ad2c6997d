"""Forms: a button that asks for something before its click is sent (``Button.asks``: a new
value for a proposal, a reason to discard one; the "Break glass" beside a proposal's Apply:
the reason to apply it at once) opens a Slack modal (``views.open`` with the
click's ``trigger_id``), and the click goes when the modal is submitted (``view_submission``),
with what was typed as its ``note`` (a break-glass reason: its ``break_glass``).

The modal's ``private_metadata`` names the click: the button as Slack sent it (its action id
and value, which ``parse_button`` reads again), the clicker, the clicked message's ts, and
the key of a record kept in Redis while the form is open. The record holds the metadata as it
was sent, and the clicked message (its text and blocks, which closing it needs; an ephemeral
one's ``response_url``). A submission whose metadata does not read, is not the record's word
for word, or comes from someone else is refused in the modal and changes nothing. Its click
id is the view's: the same submission delivered again is the same click."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from bot.chat.break_glass import FORM_HINT, FORM_TITLE, GLASS_LABEL, REASON_LABEL
from bot.chat.notices import UNCHANGED
from core.gateway.break_glass import MAX_GLASS_REASON
from core.gateway.edits import MAX_EDIT_CHARS, value_text
from core.gateway.outcome import Proposal
from core.state.keys import WorkspaceKeys

from .buttons import ButtonRef, parse_button
from .turns import PLATFORM

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = [
    "FORM",
    "FormRecord",
    "FormRef",
    "OpenForms",
    "Submission",
    "Unfit",
    "form_view",
    "new_form",
    "prefill_for",
    "read_submission",
    "refusal_view",
]

FORM = "deliberate-form"  # the callback_id of every modal the bot opens
NOTE_BLOCK, NOTE_ACTION = "deliberate-note", "note"
FORM_TTL_SEC = 86400  # a form left open longer is refused (and the record gone)
MAX_REASON = 300  # what a discard keeps of its reason
MAX_NOTE = 4000  # what a click carries (Slack's inputs stop at 3000)
TEXT_CHARS = 3000  # Slack's limit on a section's text and on private_metadata

GARBLED = "This form's data is not valid" + UNCHANGED
NOT_OPENED = (
    "This form is not one Deliberate opened, or it stayed open too long (a day)" + UNCHANGED
)
NOT_YOURS = "This form was opened for someone else" + UNCHANGED
TOO_LONG = f"What you typed is longer than {MAX_NOTE} characters" + UNCHANGED

_TITLES = {  # title and submit button (Slack: at most 24 characters each)
    "value": ("Edit the proposal", "Apply"),
    "reason": ("Discard the proposal", "Discard"),
    "glass": (FORM_TITLE, GLASS_LABEL),
}
Asks = Literal["value", "reason", "glass"]
_LABELS = {"value": "New value", "reason": "Why discard it? (optional)", "glass": REASON_LABEL}
_MAX_TYPED = {"value": MAX_EDIT_CHARS, "reason": MAX_REASON, "glass": MAX_GLASS_REASON}


class FormRef(BaseModel):
    """What a form's ``private_metadata`` says: one compact JSON object, under 3000
    characters (a button's value is at most 2000 in theory, ours about 200)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    form: str = Field(pattern=r"^[0-9a-f]{32}$")  # its record's key
    action_id: str = Field(max_length=255)
    value: str = Field(max_length=2000)
    user: str = Field(pattern=r"^[A-Z0-9]{2,40}$")  # whom it was opened for
    label: str = Field(max_length=75)  # the clicked button's
    ts: str | None = Field(default=None, pattern=r"^[0-9]{1,20}\.[0-9]{1,10}$")  # a public one

    def dumps(self) -> str:
        return self.model_dump_json()


class FormRecord(BaseModel):
    """What is kept while a form is open: its metadata as sent, and the clicked message."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metadata: str
    text: str = ""
    blocks: list[dict[str, JsonValue]] = []
    response_url: str | None = None


@dataclass(frozen=True)
class Submission:
    """A submitted form, as read (not yet checked against its record)."""

    form: FormRef
    metadata: str
    ref: ButtonRef
    user: str
    view_id: str
    note: str | None

    def message(self, record: FormRecord) -> dict[str, Any] | None:
        """The public message the button was on, as closing it needs it."""
        if self.form.ts is None:
            return None
        return {"ts": self.form.ts, "text": record.text, "blocks": record.blocks}


@dataclass(frozen=True)
class Unfit:
    """What is wrong with what was typed in a form, said under its box (``response_action``
    ``errors``): the form stays open, as typed, for its submitter to mend."""

    text: str

    def errors(self) -> dict[str, str]:
        return {NOTE_BLOCK: self.text}


class OpenForms:
    """The records of the forms open in one workspace, each kept ``FORM_TTL_SEC``."""

    def __init__(self, client: RedisClient, workspace: str) -> None:
        self.redis = client
        self.keys = WorkspaceKeys(workspace)

    def _key(self, form: str) -> str:
        return self.keys.adapter(PLATFORM, f"form:{form}")

    def put(self, form: FormRef, message: dict[str, Any] | None, response_url: str | None) -> None:
        record = FormRecord(
            metadata=form.dumps(),
            text=str((message or {}).get("text") or ""),
            blocks=list((message or {}).get("blocks") or []),
            response_url=response_url,
        )
        self.redis.set(self._key(form.form), record.model_dump_json(), ex=FORM_TTL_SEC)

    def get(self, form: str) -> FormRecord | None:
        raw = self.redis.get(self._key(form))
        return FormRecord.model_validate_json(str(raw)) if raw else None


def new_form(ref: ButtonRef, user: str, label: str, ts: str | None) -> FormRef:
    return FormRef(
        form=secrets.token_hex(16),
        action_id=ref.action_id(),
        value=ref.value(),
        user=user,
        label=label[:75],
        ts=ts,
    )


def prefill_for(asks: str, proposed: JsonValue) -> str:
    """What the form's box starts with: the value a proposal would write, as an edit box shows
    it (``value_text``), when it fits in one (3000 characters); else nothing."""
    if asks != "value" or proposed is None:
        return ""
    text = value_text(proposed)
    return text if len(text) <= MAX_EDIT_CHARS else ""


def form_view(
    asks: Asks,
    form: FormRef,
    proposal: Proposal | None,
    secret: bool = False,
) -> dict[str, Any]:
    """The modal: what the proposal would do, and a box for the new value (multiline,
    required, starting as the value it would write, unless the key is ``secret``), for a
    reason to discard it (one line, optional) or for the reason to break the glass
    (multiline, required, at most what is kept of it)."""
    proposed = proposal.current_value if proposal is not None else None
    prefill = "" if secret else prefill_for(asks, proposed)
    as_json = proposal is not None and not isinstance(proposed, str)
    summary = proposal.summary(secret) if proposal is not None else ""
    required = asks != "reason"
    element: dict[str, Any] = {
        "type": "plain_text_input",
        "action_id": NOTE_ACTION,
        "multiline": required,
        "max_length": _MAX_TYPED[asks],
    }
    if prefill:  # Slack refuses an empty initial_value
        element["initial_value"] = prefill
    hint = "Applying commits this value instead of the proposed one."
    if as_json:
        hint += " Write it as JSON, as shown."
    note: dict[str, Any] = {
        "type": "input",
        "block_id": NOTE_BLOCK,
        "optional": not required,
        "label": _plain(_LABELS[asks]),
        "element": element,
    }
    if required:
        note["hint"] = _plain(hint if asks == "value" else FORM_HINT)
    blocks = [_section(f"Proposed: {summary}")] if summary else []
    title, submit = _TITLES[asks]
    return {
        "type": "modal",
        "callback_id": FORM,
        "private_metadata": form.dumps(),
        "title": _plain(title),
        "submit": _plain(submit),
        "close": _plain("Cancel"),
        "blocks": [*blocks, note],
    }


def refusal_view(text: str) -> dict[str, Any]:
    """What a refused submission's modal shows instead of the form (``response_action``
    ``update``): only to the person who submitted it."""
    return {
        "type": "modal",
        "title": _plain("Deliberate"),
        "close": _plain("Close"),
        "blocks": [_section(text)],
    }


def read_submission(body: dict[str, Any]) -> Submission:
    """A ``view_submission`` payload's form; ValueError, saying what is wrong in words for the
    submitter, when it cannot be one the bot opened for them."""
    view = body.get("view")
    user = body.get("user")
    if not (isinstance(view, dict) and isinstance(user, dict)):
        raise ValueError(GARBLED)
    metadata, view_id = view.get("private_metadata"), view.get("id")
    if not (isinstance(metadata, str) and isinstance(view_id, str) and view_id):
        raise ValueError(GARBLED)
    try:
        data = json.loads(metadata)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        form = FormRef.model_validate(data)
        ref = parse_button(form.action_id, form.value)
    except (ValidationError, ValueError, RecursionError):
        raise ValueError(GARBLED) from None
    if ref.asks is None:
        raise ValueError(GARBLED)  # a button that asks for nothing opens no form
    if user.get("id") != form.user:
        raise ValueError(NOT_YOURS)
    note = _typed(view)
    if note is not None and len(note) > MAX_NOTE:
        raise ValueError(TOO_LONG)
    return Submission(form, metadata, ref, form.user, view_id, note)


def _typed(view: dict[str, Any]) -> str | None:
    """The box's text (``view.state.values[block_id][action_id].value``); None when empty."""
    state = view.get("state")
    values = state.get("values") if isinstance(state, dict) else None
    block = values.get(NOTE_BLOCK) if isinstance(values, dict) else None
    box = block.get(NOTE_ACTION) if isinstance(block, dict) else None
    typed = box.get("value") if isinstance(box, dict) else None
    if not isinstance(typed, str) or not typed.strip():
        return None
    return typed


def _plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text, "emoji": True}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": _plain(text[:TEXT_CHARS])}
