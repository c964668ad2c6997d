"""The changes this process's clicks committed, each as its log record holds it, the value
its key held before included, as the commit said it (``StateStore.commit_on``): an Undo of
one is checked and committed on the Undo click's save with nothing asked of the server
first (``deciding.known_undo``; what the server holds now is the commit's to check). A
change another process committed, or one pushed out of the table, is looked up as before."""

from __future__ import annotations

from core.gateway.outcome import Outcome
from core.recently_used import Recent
from core.state.commit_result import Committed
from core.state.mutation_log import LogRecord

__all__ = ["KEPT", "MadeHere"]

KEPT = 512  # changes kept (by mutation id), the least recently heard going first


class MadeHere:
    """A runtime's table of the commits its clicks made (one workspace's)."""

    def __init__(self, size: int = KEPT) -> None:
        self._made: Recent[Committed] = Recent(size)

    def heard(self, outcome: Outcome) -> None:
        """``outcome`` kept when it is a commit made now that said what its key held."""
        if isinstance(outcome, Committed) and outcome.prev_said and not outcome.duplicate:
            self._made.put(outcome.request.id, outcome)

    def record(self, mutation_id: str) -> LogRecord | None:
        """The log record of ``mutation_id``'s commit, as it was heard (None: not kept)."""
        made = self._made.get(mutation_id)
        if made is None:
            return None
        return LogRecord(
            made.log_id,
            made.mutation,
            made.version,
            made.ts,
            made.expires_at,
            made.prev_json,
        )
