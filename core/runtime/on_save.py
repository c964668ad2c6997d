"""A click's commit sent in the same round trip as the click's save, after it, and made only
on that save: commit.lua finds the save's token among the session's last saves' tokens, or
writes nothing and answers "unsaved" (a save beaten by another writer's never lets it run).
Then a click takes two round trips, not three: its save with its commit, and the save of
what it came to; or one (below).

When what the commit comes to can be told before it is made (its key's version is expected:
the commit makes the next one), the save of what it came to goes in that round trip too,
after the commit, made only if the commit's idempotency record says this request made it at
that version (``foreseen``; ``session_cas.lua``'s ARGV[7]): then a click takes one round
trip. That save is made while the click's save and the commit are on their way
(``AheadLater``, ``SessionStore.together``'s ``then``), and sent behind them on the same
connection. When the commit came to anything else, or someone saved between, that save
writes nothing, and what the commit came to is saved after it, as before. An Undo's revert
is made on its click's save the same way (``revert_on_save``).

Only a commit the policy lets through at once, with no replica to confirm it
(``MutationGateway.ready``), and only when it is the first thing the click asks for that acts
beyond the session. Its reply is read as ``propose`` reads the commit's (``answered``); when
the save landed but the commit did not run (the session's save tokens no longer hold it, or
the server forgot the save script and ran it after), it is proposed alone, as before."""

from __future__ import annotations

import logging
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.deliberation.commands import Cmd, Commit, RevertCommit, Show, Teach
from core.deliberation.memory import ClickStatus
from core.deliberation.messages import OutcomeNote
from core.deliberation.session import Session
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import Outcome
from core.gateway.policy import Verdict
from core.gateway.reverts import Planned
from core.runtime.deciding import planned_undo
from core.runtime.outcome_notes import note_under
from core.runtime.sessions import Saving
from core.state.commit_call import unsaved
from core.state.commit_result import Committed
from core.state.scripts import ScriptCall

__all__ = [
    "Ahead",
    "AheadLater",
    "CommitOnSave",
    "commit_on_save",
    "foreseen",
    "made_before",
    "revert_on_save",
]

_log = logging.getLogger(__name__)


@dataclass
class Ahead:
    """The save of what a click's commit came to, made before the commit was (``foreseen``)
    and sent in its round trip: ``note``, what the commit was foreseen to come to; ``cmds``,
    what the click's update with it asked for after its save (views, a lesson); ``saving``,
    that save."""

    note: OutcomeNote
    cmds: list[Cmd]
    saving: Saving

    def heard(self, outcome: Outcome) -> None:
        """``outcome``, what the commit's reply said, once its save landed: logged when it
        is not what was foreseen. The save was made only on the record of this request's
        commit at that version, so it was made so, and the note foreseen is told; a reply
        that says otherwise was made again after that record was gone (evicted from a full
        Redis)."""
        told = (False, self.note.version)  # (not a repeat, at the version foreseen)
        if isinstance(outcome, Committed) and (outcome.duplicate, outcome.version) == told:
            return
        _log.warning(
            "a commit told as foreseen (%s, v%s) answered otherwise when sent again: %s",
            self.note.key,
            self.note.version,
            type(outcome).__name__,
        )


class AheadLater:
    """The ``Ahead`` of a commit (or None: none), made once, when asked, as
    ``SessionStore.together``'s ``then``: while the commit is on its way, its save is
    sent behind it. Asked again (the round trip made again), the same save."""

    def __init__(self, make: Callable[[], Ahead | None]) -> None:
        self._make: Callable[[], Ahead | None] | None = make
        self.ahead: Ahead | None = None

    def __call__(self) -> list[ScriptCall]:
        if self._make is not None:
            self.ahead, self._make = self._make(), None
        return [] if self.ahead is None else [self.ahead.saving.call]


@dataclass
class CommitOnSave:
    """``cmd``'s commit, its policy's ``verdict`` given, to send with a save
    (``MutationGateway.commit_on``); what it came to is heard with the save (``heard``) and
    read once by ``outcome``. An Undo's revert is one too (``revert_on_save``): ``planned``,
    what it was checked as (a conflict is told in its terms)."""

    cmd: Commit
    verdict: Verdict
    reply: list[Any] | None = None
    ahead: Ahead | None = None  # what it came to, saved already in its round trip
    planned: Planned | None = None

    def heard(self, reply: list[Any]) -> None:
        self.reply = reply

    @property
    def ran(self) -> bool:
        """Whether the commit ran on its save (heard, and not "unsaved")."""
        return self.reply is not None and not unsaved(self.reply)

    def outcome(self, gateway: MutationGateway) -> Outcome | None:
        """What the commit came to, as told (a revert's as ``Planned.told`` tells it;
        None: it did not run: propose it)."""
        reply, self.reply, planned = self.reply, None, self.planned
        if reply is None:
            return None
        if planned is None:
            return gateway.answered(self.verdict, reply)
        return gateway.answered(
            self.verdict, reply, planned.told, reverts=planned.record.mutation.id
        )


def commit_on_save(
    gateway: MutationGateway, cmds: Sequence[Cmd], adapt: bool, heard: Container[str] = ()
) -> CommitOnSave | None:
    """The commit ``cmds`` ask for first, when nothing before it acts beyond the session (a
    view does not; a lesson does only when the workspace learns, ``adapt``) and the policy
    lets it through at once; None: it goes as before, or (its mutation id in ``heard``) it
    was made by an attempt whose save was beaten, and what it came to is heard already."""
    for cmd in cmds:
        if isinstance(cmd, Show) or (isinstance(cmd, Teach) and not adapt):
            continue
        if not isinstance(cmd, Commit) or cmd.mutation.id in heard:
            return None
        verdict = gateway.ready(cmd.mutation)
        return None if verdict is None else CommitOnSave(cmd, verdict)
    return None


def revert_on_save(
    gateway: MutationGateway,
    cmds: Sequence[Cmd],
    looked_up: Mapping[str, Any],
    known: Mapping[str, Planned],
) -> CommitOnSave | None:
    """An Undo's revert (``cmds``: its ``RevertCommit`` alone), checked as it came (``known``,
    by the mutation it undoes: a change this process committed), or on what its lookup
    found (``looked_up``: sent as the click came, read while the click was updated), to
    commit on the click's save as a click's commit is (the Undo in one round trip). None:
    as before, once its save is heard of (a refusal is checked, and logged, then: not
    here)."""
    if len(cmds) != 1 or not isinstance(cmds[0], RevertCommit):
        return None
    click = cmds[0].click
    planned: Planned | OutcomeNote | None = known.get(click.target_id)
    if planned is None and click.target_id in looked_up:
        planned = planned_undo(gateway, click, looked_up[click.target_id], record=False)
    if not isinstance(planned, Planned):
        return None
    verdict = gateway.ready(planned.mutation)
    if verdict is None:
        return None
    return CommitOnSave(Commit(planned.mutation, click), verdict, planned=planned)


def foreseen(
    gateway: MutationGateway, verdict: Verdict, commit: ScriptCall
) -> tuple[OutcomeNote, tuple[str, str]] | None:
    """The note ``commit`` (of ``verdict``'s mutation, ``MutationGateway.commit_on``) is told
    when it is made as asked, and what its idempotency record ends with then (its key, and
    "v<version>\\n<request>": ``SessionStore.prepare``'s ``made``). None: not told ahead (no
    version expected, so the next is not known; a change for a while, whose note says when
    it reverts; a secret key's; a break-glass)."""
    m = verdict.mutation
    if (
        m.expected_version is None
        or m.reverts_at(0) is not None
        or "breakGlass" in m.meta
        or gateway.policy.is_secret(m.key)
    ):
        return None
    version = m.expected_version + 1
    # (a note reads of a commit its mutation, version and whether it was a repeat)
    note = note_under(gateway.policy, Committed(m, version, "", 0, None, None, {}))
    _, _, _, _, record, *_ = commit.keys
    return note, (record, f"v{version}\n{commit.args[17]}")


def made_before(reply: list[Any], ahead: Ahead, session: Session, click_id: str) -> bool:
    """Whether a click's commit and the save of what it came to (``ahead``) landed on an
    attempt before this one, whose answer was lost: the commit's ``reply`` is a repeat of
    this very request at the version foreseen, and the session found (``session``: others
    saved on it since) records the click as done."""
    return (
        reply[0] == "duplicate"
        and reply[2] == f"v{ahead.note.version}"
        and int(reply[-1]) == 1
        and any(
            c.click_id == click_id and c.status is ClickStatus.DONE
            for c in session.interaction.clicks
        )
    )
