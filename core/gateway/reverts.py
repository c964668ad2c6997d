"""Undo: a committed mutation is reverted by a new typed mutation, never by rewriting history.

A ``Revert`` names the mutation to undo. Its log record says which version it made and the
value the key held just before; the revert writes that value back (or deletes the key, if it
was absent), expecting the key still at the version the mutation made, through the gateway
like any change: the reverter's roles are checked, the log keeps both, rules see a set (or a
delete). Refused when the key moved on in between, when the log no longer holds the record
or the value before it (too large to keep), and, for an "Undo" button, past the time it was
offered for. A revert has one mutation id per reverted mutation: asked again, it answers its
first result and commits nothing.

A *timed* revert (``timed=True``) undoes a change made for a while, at its deadline
(``core/gateway/timed.py``): the person who made the change is its actor (they asked for
the revert with the change), the timer its ``proposedBy`` (so it commits without asking
again where the key's writes wait for approval, with that person's right to write the key
checked), and its meta says ``timed``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from core.gateway.outcome import Outcome
from core.state.actor import Actor
from core.state.codec import text
from core.state.commit_result import Rejected, RejectReason
from core.state.mutation import Mutation, Op, new_id, revert_id
from core.state.mutation_log import LogRecord, MutationLog, UnreadableRecord
from core.state.scripts import UNDO_LOOKUP_LUA, LuaScript, ScriptCall, server_ms, time_ms
from core.time_phrases import moment_text

if TYPE_CHECKING:
    from core.gateway.mutation_gateway import MutationGateway
    from core.state.store import StateStore

__all__ = [
    "Planned",
    "Revert",
    "planned_known",
    "planned_revert",
    "revert",
    "revert_id",
    "undo_lookup",
]


@dataclass(frozen=True)
class Revert:
    """Undo the mutation ``mutation_id`` as ``actor``. ``version``: the version it made, as
    the button that offered the undo knew it; ``offered_for_ms``: how long after its commit
    the undo was offered (None: at any time, as ``deliberate revert`` asks)."""

    mutation_id: str
    actor: Actor
    version: int | None = None
    offered_for_ms: int | None = None
    correlation_id: str | None = None
    scan: int | None = None  # the newest log records to look in (None: all of them)
    timed: bool = False  # the deadline of a change made for a while (``actor``: the timer)


@dataclass(frozen=True)
class _Now:
    """What a revert checks against: the server's clock, the key's version, and whether the
    revert committed already (its idempotency record)."""

    ms: int
    version: int
    done: bool


def revert(
    gateway: MutationGateway, request: Revert, looked_up: Sequence[Any] | None = None
) -> Outcome:
    """The revert's outcome (committed, pending where the key's writes need approval, or
    refused with the reason); every refusal is in the decision log. The record and what it
    is checked against come in one round trip while the mutation's idempotency record
    lasts (``undo_lookup``: an Undo's case); else the log is looked through.
    ``looked_up``: that lookup's reply, when the caller sent it along with a round trip of
    its own (an Undo click, with its session's save): then it is not asked again."""
    planned = planned_revert(gateway, request, looked_up)
    if not isinstance(planned, Planned):
        return planned
    return planned.told(gateway.propose(planned.mutation))


@dataclass(frozen=True)
class Planned:
    """A revert checked and ready to propose: its ``mutation``, and the ``record`` of the
    change it reverts (what a conflict is told in terms of). ``deadline``: the end of the
    time an Undo was offered for (server ms), for its commit to check (``planned_known``:
    checked by nobody before)."""

    record: LogRecord
    mutation: Mutation
    deadline: int | None = None

    def told(self, outcome: Outcome) -> Outcome:
        """``outcome`` (of ``mutation``, proposed) as a revert tells it."""
        if not isinstance(outcome, Rejected):
            return outcome
        if outcome.reason is RejectReason.CONFLICT:
            said = _moved_on(self.record, outcome.version)
            return Rejected(self.mutation, RejectReason.CONFLICT, said)
        if outcome.reason is RejectReason.EXPIRED and self.deadline is not None:
            said = _offered_until(self.deadline, outcome.at, self.record.mutation.id)
            return Rejected(self.mutation, RejectReason.EXPIRED, said)
        return outcome


def planned_revert(
    gateway: MutationGateway,
    request: Revert,
    looked_up: Sequence[Any] | None = None,
    record: bool = True,
) -> Planned | Rejected:
    """``revert`` up to its proposal: the revert checked (``Planned``), or refused (and
    the refusal in the decision log; ``record`` False: not, for a caller that asks again
    before it tells it)."""
    if looked_up is None:
        looked_up = undo_lookup(gateway.store, request.mutation_id).run()
    looked = _looked_up(looked_up, request.mutation_id)
    logged: LogRecord | None
    now: _Now | None = None
    if looked is not None and request.version in (None, looked[0].version):
        (logged, now), refusal = looked, None
    else:
        logged, refusal = _record(gateway, request)
    if refusal is not None or logged is None:
        assert refusal is not None
        if record:
            gateway.decisions.record(refusal, reverts=request.mutation_id)
        return refusal
    mutation = _mutation(logged, request)
    problem = _problem(gateway, logged, request, mutation, now)
    if problem is not None:
        if record:
            gateway.decisions.record(problem, reverts=request.mutation_id)
        return problem
    return Planned(logged, mutation)


def planned_known(request: Revert, record: LogRecord) -> Planned | None:
    """A revert of ``record``, the change as the process that committed it heard it (the
    value before it included: ``Committed.prev_json``), checked as far as it can be without
    asking the server: what the server holds now (the key still at the version the change
    made, the time the Undo was offered for, the revert made already) is its commit's to
    check (its expected version, ``Planned.deadline``, its idempotency). None: not so
    checked (not the version the button knew, not a person's, a timed one): ask the server
    (``planned_revert``)."""
    if request.version != record.version or request.timed or not request.actor.is_person:
        return None
    offered = request.offered_for_ms
    deadline = None if offered is None else record.ts + offered
    return Planned(record, _mutation(record, request), deadline)


def undo_lookup(store: StateStore, mutation_id: str) -> ScriptCall:
    """What a revert of ``mutation_id`` asks first (``undo_lookup.lua``): read-only, so a
    caller may send it along with a round trip it makes anyway (``revert``'s ``looked_up``)."""
    keys = [
        store.keys.idempotency(mutation_id),
        store.keys.log,
        store.keys.versions,
        store.keys.idempotency(revert_id(mutation_id)),
    ]
    return ScriptCall(LuaScript(store.redis, UNDO_LOOKUP_LUA), keys, [])


def _looked_up(reply: Sequence[Any], mutation_id: str) -> tuple[LogRecord, _Now] | None:
    """The record and what it is checked against, from the lookup's reply; None (the log is
    looked through) when the idempotency record found none, or one that is not readable as
    the record of ``mutation_id``."""
    if len(reply) < 6:
        return None
    log_id, flat = str(text(reply[2])), [str(text(part)) for part in reply[3]]
    try:
        record = LogRecord.from_stream(log_id, dict(zip(flat[::2], flat[1::2], strict=True)))
    except (UnreadableRecord, ValueError):  # (an odd count of fields too)
        return None
    if record.mutation.id != mutation_id:
        return None
    now = _Now(time_ms(reply[:2]), int(reply[4]), bool(int(reply[5])))
    return record, now


def _record(gateway: MutationGateway, request: Revert) -> tuple[LogRecord | None, Rejected | None]:
    log = MutationLog(gateway.store.redis, gateway.store.keys)
    record = log.find(request.mutation_id, scan=request.scan)
    if record is not None and request.version in (None, record.version):
        return record, None
    placeholder = Mutation(
        id=revert_id(request.mutation_id),
        op=Op.DELETE,
        key="revert",
        actor=request.actor,
        correlation_id=request.correlation_id or new_id(),
    )
    where = "" if request.scan is None else f" among its newest {request.scan} records"
    message = f"no committed mutation {request.mutation_id} in the log{where}: nothing to revert"
    return None, Rejected(placeholder, RejectReason.NOT_FOUND, message)


def _mutation(record: LogRecord, request: Revert) -> Mutation:
    reverted = record.mutation
    before = record.prev_json
    actor, proposed_by = request.actor, None
    meta: dict[str, JsonValue] = {"reverts": reverted.id, "revertsLogId": record.log_id}
    reason = f"revert of {reverted.id} (v{record.version})"
    if request.timed:
        meta["timed"] = True
        reason = f"timed {reason}"
        if reverted.actor.is_person:  # who made it for a while asked for this too
            actor, proposed_by = reverted.actor, request.actor
    return Mutation(
        id=revert_id(reverted.id),
        op=Op.DELETE if before is None else Op.SET,
        key=reverted.key,
        value=None if before is None else record.prev,
        actor=actor,
        proposed_by=proposed_by,
        reason=reason,
        expected_version=record.version,
        # a timed revert is the end of the change's own story: traced with it
        correlation_id=request.correlation_id
        or (reverted.correlation_id if request.timed else new_id()),
        causation_id=reverted.id,
        meta=meta,
    )


def _problem(
    gateway: MutationGateway,
    record: LogRecord,
    request: Revert,
    mutation: Mutation,
    known: _Now | None,
) -> Rejected | None:
    actor = request.actor
    if not actor.is_person and not request.timed:
        return Rejected(mutation, RejectReason.FORBIDDEN, f"{actor} cannot revert; a person must")
    if not record.prev_kept:
        return Rejected(
            mutation,
            RejectReason.NOT_FOUND,
            f"the value {mutation.key} held before was too large for the log to keep "
            f"({record.prev_bytes} bytes): it cannot be restored",
        )
    store = gateway.store
    if request.offered_for_ms is not None:
        until = record.ts + request.offered_for_ms
        now_ms = known.ms if known else server_ms(store.redis, store.keys.versions)
        if now_ms >= until:
            message = _offered_until(until, now_ms, record.mutation.id)
            return Rejected(mutation, RejectReason.EXPIRED, message)
    now = known.version if known else store.version(mutation.key)
    if now != record.version and not (
        known.done if known else store.redis.exists(store.keys.idempotency(mutation.id))
    ):
        return Rejected(mutation, RejectReason.CONFLICT, _moved_on(record, now))
    return None


def _offered_until(until: int, now_ms: int | None, mutation_id: str) -> str:
    return (
        f"Undo was offered until {moment_text(until, now_ms)}; "
        f"`deliberate revert {mutation_id}` can still revert it"
    )


def _moved_on(record: LogRecord, now: int | None) -> str:
    current = "" if now is None else f", v{now} now"
    return (
        f"{record.mutation.key} changed since that change (v{record.version} then{current}): "
        "nothing was reverted"
    )
