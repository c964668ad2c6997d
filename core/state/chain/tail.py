"""Where a reader of the log stopped: replay reads up to a moment, and the log must go on
from there as the chain says. The record after the last one read must follow it; with none
after it, the last one read must be the chain's head (``{ws:<id>}:chain``). So records
deleted after the moment asked for, or at the end of the log, are a break where they were,
as ``verify`` finds them, never a shorter history answered as the whole."""

from __future__ import annotations

from copy import copy
from typing import TYPE_CHECKING

from core.state.chain.start import Break, Follow
from core.state.chain.verify import stored_head
from core.state.keys import WorkspaceKeys
from core.state.streams import raw_rows

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["cut_short"]


def cut_short(client: RedisClient, keys: WorkspaceKeys, follow: Follow) -> Break | None:
    """Why the log does not go on from the last record ``follow`` checked, or None; the
    record after it is checked on a copy (``follow`` is left as it was). The head is read
    before that record is looked for: a commit made meanwhile is past both."""
    last = follow.last if follow.first is not None else None
    head = stored_head(client, keys)
    start = "-" if last is None else f"({last.log_id}"
    for log_id, fields in raw_rows(client, keys.log, start, batch=1):
        return copy(follow).raw(log_id, fields)
    if head is None:
        if last is None:
            return None
        return Break(
            keys.chain,
            f"the chain's head is missing, though the log holds records up to {last.n} "
            f"({last.log_id})",
        )
    if last is None or head.n > last.n:
        ends = "holds no chained record" if last is None else f"ends at record {last.n}"
        return Break(
            head.log_id,
            f"record {head.n}, the chain's head, is gone: the log {ends}, so its newest "
            "record(s) were deleted",
        )
    if head != last:
        return Break(
            last.log_id,
            f"record {last.n} is the log's last, but the chain's head is record {head.n} "
            f"({head.log_id}): the head or the log was rewritten",
        )
    return None
