"""Changes for a while: a commit with ``for_sec`` reverts by itself at its deadline.

The deadline is written by the commit itself: commit.lua adds (commit time + ``for_sec``,
mutation id) to the workspace's ``timed`` sorted set in the same script that applies the
change, so a change is never on the log without its deadline (nor the other way round),
and the set is in Redis, replicated with the commit: a restarted worker, or the replica
promoted after a failover, finds it there. The deadline is also ``ts + for_sec`` of the
change's log record (``Mutation.reverts_at``), which is how the log and the trace show it
without asking the set.

``revert_due`` (the worker runs it every few seconds) reverts each due change through
``reverts.revert`` with ``timed=True``: a revert mutation on the log, its meta saying
``timed``. It commits once however many workers race, because a revert has one mutation
id per reverted mutation (the second answers the first's result). A change written over
since (a later write moved the key past the version it made) is not reverted: the revert
path refuses it as a conflict, which the decision log keeps with the reason. Either way
the entry leaves the set; one whose revert could not be sent at all (Redis away) stays,
and is tried again at the next sweep.

``timed_change`` says where a change for a while stands (its revert waiting, made, or
refused), for every place that shows it (``StateStore.timed`` says it of entries).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from core.gateway.outcome import Outcome
from core.gateway.reverts import Revert, revert
from core.state.actor import Actor, ActorKind
from core.state.commit_result import Committed
from core.state.mutation import revert_id
from core.state.scripts import server_ms
from core.state.store import StateStore
from core.state.streams import stream_ms, stream_rows
from core.time_phrases import TimedChange

if TYPE_CHECKING:
    from core.gateway.mutation_gateway import MutationGateway

__all__ = ["TIMER", "revert_due", "timed_change"]

log = logging.getLogger("deliberate.gateway")

TIMER = Actor(kind=ActorKind.SYSTEM, id="timer")
BATCH = 100  # due changes reverted per round of a sweep


def revert_due(gateway: MutationGateway, now_ms: int | None = None) -> int:
    """Revert the changes whose time is up (``now_ms``: the Redis server's clock unless
    given); how many this call reverted (a revert another worker made first, or one refused
    because the key changed since, is not counted)."""
    store = gateway.store
    if now_ms is None:
        now_ms = server_ms(store.redis, store.keys.versions)
    reverted = 0
    while True:
        found = store.redis.zrangebyscore(store.keys.timed, "-inf", now_ms, 0, BATCH)
        due = [str(m) for m in found]
        for mutation_id in due:
            outcome = revert(gateway, Revert(mutation_id, TIMER, timed=True))
            reverted += _dealt_with(store, mutation_id, outcome)
        if len(due) < BATCH:
            return reverted


def _dealt_with(store: StateStore, mutation_id: str, outcome: Outcome) -> int:
    """Takes ``mutation_id`` off the set; 1 when this call's revert committed it."""
    store.redis.zrem(store.keys.timed, mutation_id)
    if isinstance(outcome, Committed):
        return 0 if outcome.duplicate else 1
    # refused (written over since, or gone from the log): the decision log has why
    log.info("timed revert of %s not made: %s", mutation_id, getattr(outcome, "message", ""))
    return 0


def timed_change(store: StateStore, mutation_id: str, deadline_ms: int) -> TimedChange:
    """Where the change ``mutation_id`` (committed for a while, due at ``deadline_ms``)
    stands: in the ``timed`` set, its revert waits; else its revert's idempotency record
    says when it committed; else it was refused (or is older than that record, 7 days)."""
    by = revert_id(mutation_id)
    waiting = store.reverts_at([mutation_id]).get(mutation_id)
    if waiting is not None:
        return TimedChange(mutation_id, waiting, by)
    first = store.redis.get(store.keys.idempotency(by))
    if first is not None:
        # when the revert committed: its record's time, the one its entry's updatedAt has (the
        # record's id may be a millisecond later: Redis stamps it when the commit adds it);
        # the id's once retention has dropped the record
        log_id = str(first).partition("\n")[0]
        rows = stream_rows(store.redis.xrange(store.keys.log, log_id, log_id))
        at = int(rows[0][1]["ts"]) if rows else stream_ms(log_id)
        return TimedChange(mutation_id, at, by, "reverted")
    return TimedChange(mutation_id, deadline_ms, by, "refused")
