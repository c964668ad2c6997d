"""Breaking the glass from chat, in the same words on Slack and on Discord. A proposal's
Apply, where its key's policy names a break-glass role, has a "Break glass" button beside it
that opens a form asking why; the form opens only for someone holding the role, on a proposal
still pending (``barred``), and its reason must be said and fit what is kept
(``reason_problem``). ``/deliberate breakglass PROPOSAL_ID@REVISION REASON`` does the same
from the command line of either platform (``break_glass_command``), at the revision of the
proposal the person saw (``/deliberate pending`` lists each as ``ID@REVISION``). The
gateway decides (``BreakGlass.apply`` checks all of it again, and records every refusal):
this only words the questions and the answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.chat.notices import UNCHANGED
from core.deliberation.sentences import not_done
from core.gateway.break_glass import MAX_GLASS_REASON, BreakGlass
from core.gateway.mutation_gateway import UnknownProposal
from core.redaction import readable
from core.runtime.outcome_notes import note_under
from core.state.actor import Actor

if TYPE_CHECKING:
    from bot.app import App

__all__ = [
    "COMMAND",
    "FORM_HINT",
    "FORM_TITLE",
    "GLASS_LABEL",
    "NO_REASON",
    "REASON_LABEL",
    "TOO_LONG",
    "USAGE",
    "Broken",
    "barred",
    "break_glass_command",
    "reason_problem",
]

COMMAND = "breakglass"  # /deliberate breakglass PROPOSAL_ID@REVISION REASON
GLASS_LABEL = "Break glass"  # the button, and what the clicked message's line calls it
FORM_TITLE = "Break the glass"  # (Slack: at most 24 characters; Discord: 45)
REASON_LABEL = "Why break the glass?"
FORM_HINT = (
    "Applies it at once, skipping the approvals it waits for. The reason goes to the log, "
    "the announcement and the review list."
)
NO_REASON = (
    "Breaking the glass needs a reason: it goes to the log, the announcement and the "
    "review list" + UNCHANGED
)
TOO_LONG = f"A break-glass reason is at most {MAX_GLASS_REASON} characters" + UNCHANGED
USAGE = (
    f"Type /deliberate {COMMAND} PROPOSAL_ID@REVISION REASON (/deliberate pending lists them: "
    "the revision is the value you saw)" + UNCHANGED
)


def reason_problem(typed: str | None) -> str | None:
    """What is wrong with a reason as typed (None: nothing): none, or nothing that shows
    (blanks, zero-width, combining characters: ``readable``), or more than is kept."""
    if typed is None or not readable(typed):
        return NO_REASON
    if len(typed) > MAX_GLASS_REASON:
        return TOO_LONG
    return None


def barred(app: App, proposal_id: str, actor: Actor) -> str | None:
    """Why ``actor`` is not asked for a reason to break the glass on ``proposal_id`` (it is
    unknown in this workspace, no longer pending, or not theirs to break), or None."""
    why = BreakGlass(app.gateway).barred(proposal_id, actor)
    return None if why is None else not_done(why)


@dataclass(frozen=True)
class Broken:
    """What ``/deliberate breakglass`` came to: the answer for the asker, and whether it
    committed (its proposal's messages then say so)."""

    text: str
    committed: bool = False
    proposal_id: str | None = None


def break_glass_command(app: App, actor: Actor, rest: str) -> Broken:
    """``/deliberate breakglass PROPOSAL_ID@REVISION REASON`` by ``actor``: the pending
    proposal applied at once, at the revision they saw (an edit made since refuses it),
    flagged with the reason. Without a revision it is refused: which value is applied is
    what they must say."""
    named, _, reason = rest.strip().partition(" ")
    if not named:
        return Broken(USAGE)
    proposal_id, at, number = named.rpartition("@")
    if not (at and proposal_id and number.isascii() and number.isdigit() and len(number) < 10):
        return Broken(f"Name the revision you saw: {USAGE[:1].lower()}{USAGE[1:]}")
    problem = reason_problem(reason)
    if problem is not None:
        said = f"Breaking the glass needs a reason, said with it: {USAGE[:1].lower()}{USAGE[1:]}"
        return Broken(said if problem == NO_REASON else problem)
    try:
        outcome = BreakGlass(app.gateway).apply(proposal_id, actor, reason, int(number))
    except UnknownProposal as exc:
        return Broken(not_done(f"{exc}; nothing was changed"))
    note = note_under(app.policy, outcome)
    if note.outcome == "rejected":
        return Broken(not_done(note.message))
    return Broken(note.message, note.outcome == "committed", proposal_id)
