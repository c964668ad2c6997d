"""A click's commit sent in the same round trip as the click's save, after it, and made only
on that save: commit.lua finds the save's token among the session's last saves' tokens, or
writes nothing and answers "unsaved" (a save beaten by another writer's never lets it run).
Then a click takes two round trips, not three: its save with its commit, and the save of
what it came to.

Only a commit the policy lets through at once, with no replica to confirm it
(``MutationGateway.ready``), and only when it is the first thing the click asks for that acts
beyond the session. Its reply is read as ``propose`` reads the commit's (``answered``); when
the save landed but the commit did not run (the session's save tokens no longer hold it, or
the server forgot the save script and ran it after), it is proposed alone, as before."""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Any

from core.deliberation.commands import Cmd, Commit, Show, Teach
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import Outcome
from core.gateway.policy import Verdict

__all__ = ["CommitOnSave", "commit_on_save"]


@dataclass
class CommitOnSave:
    """``cmd``'s commit, its policy's ``verdict`` given, to send with a save
    (``MutationGateway.commit_on``); what it came to is heard with the save (``heard``) and
    read once by ``outcome``."""

    cmd: Commit
    verdict: Verdict
    reply: list[Any] | None = None

    def heard(self, reply: list[Any]) -> None:
        self.reply = reply

    def outcome(self, gateway: MutationGateway) -> Outcome | None:
        """What the commit came to (None: it did not run: propose it)."""
        reply, self.reply = self.reply, None
        return None if reply is None else gateway.answered(self.verdict, reply)


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
