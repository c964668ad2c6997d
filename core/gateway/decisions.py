"""Every gateway decision, logged as a JSON line with its reason and correlation id.

Committed mutations are already in the mutation log; decisions that committed nothing
(rejections, proposals) are also kept in a capped stream so a trace can find them later.
Each commit and each refusal is counted here too (``core.metrics``: commits, rejections by
reason), once.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from core.gateway.outcome import Outcome, Pending, Proposal, ProposalStatus, approvals_message
from core.gateway.secrecy import Secrecy
from core.metrics import COMMITS, REJECTIONS, Meter
from core.state.actor import Actor
from core.state.commit_result import Committed, Rejected
from core.state.keys import WorkspaceKeys
from core.state.streams import stream_ms, stream_rows
from core.state.value_json import dumps

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["DecisionLog"]

_log = logging.getLogger("deliberate.gateway")


def decision_fields(outcome: Outcome) -> dict[str, Any]:
    m = outcome.mutation
    fields: dict[str, Any] = {
        "event": "gateway.decision",
        "outcome": outcome.name,
        "key": m.key,
        "op": m.op.value,
        "actor": str(m.actor),
        "mutation_id": m.id,
        "correlation_id": m.correlation_id,
    }
    if m.proposed_by is not None:
        fields["proposed_by"] = str(m.proposed_by)
    if isinstance(m.meta.get("proposal"), str):  # applying a proposal: its steps share its id
        fields["proposal_id"] = m.meta["proposal"]
    if "breakGlass" in m.meta:  # applied at once, by a role that may: flagged for review
        fields["break_glass"] = m.meta["breakGlass"]
    if isinstance(outcome, Committed):
        fields.update(version=outcome.version, duplicate=outcome.duplicate, reason=m.reason)
    elif isinstance(outcome, Rejected):
        fields.update(reason=outcome.reason.value, message=outcome.message)
    else:
        p = outcome.proposal
        waits = approvals_message(p) if p.approvals else "awaits a person with the right role"
        fields.update(reason=waits, proposal_id=p.id, deadline=p.expires_at)
    return fields


class DecisionLog:
    def __init__(
        self, client: RedisClient, keys: WorkspaceKeys, secrecy: Secrecy, keep: int = 10_000
    ) -> None:
        """``secrecy``: a refusal that quotes a secret value is kept with it masked."""
        self.redis = client
        self.keys = keys
        self.secrecy = secrecy
        self.keep = keep
        self.meter = Meter.of(client, keys.workspace)

    def record(self, outcome: Outcome, *, metered: bool = True, **details: Any) -> None:
        """``details``: what else the decision turned on (a proposal's id and deadline),
        kept with its fields. ``metered``: False for a decision that answers no one's
        request (the sweep expiring a proposal), or restates one counted already."""
        if metered:
            self._count(outcome)
        # (a break-glass commit too: the trace and the review show it)
        glass = isinstance(outcome, Committed) and "breakGlass" in outcome.request.meta
        if glass:
            assert isinstance(outcome, Committed)
            self._listed(outcome)
        kept = isinstance(outcome, Rejected | Pending) or glass
        if not kept and not _log.isEnabledFor(logging.INFO):
            return
        fields = decision_fields(self.secrecy.outcome(outcome)) | details
        _log.info(
            "%s %s %s: %s",
            fields["outcome"],
            fields["op"],
            fields["key"],
            fields["reason"],
            extra={"fields": fields},
        )
        if kept:
            self.redis.xadd(
                self.keys.decisions, {"decision": dumps(fields)}, maxlen=self.keep, approximate=True
            )

    def _listed(self, outcome: Committed) -> None:
        """A committed break-glass change, into the review list (``BreakGlass.listed``),
        once per mutation id: whoever records its commit (or finds it on record, its
        breaker having stopped before) lists it."""
        m = outcome.request
        glass = m.meta["breakGlass"]
        assert isinstance(glass, dict)
        record = {
            "mutationId": m.id,
            "key": m.key,
            "op": m.op.value,
            "version": outcome.version,
            "by": m.actor.model_dump(mode="json"),
            "reason": glass["reason"],
            "proposal": m.meta.get("proposal"),
            "at": outcome.ts,
            "logId": outcome.log_id,
        }
        self.redis.hsetnx(self.keys.break_glass, m.id, json.dumps(record))

    def _count(self, outcome: Outcome) -> None:
        if isinstance(outcome, Committed):
            if not outcome.duplicate:  # a retried id's first result: counted the first time
                self.meter.count(COMMITS)
        elif isinstance(outcome, Rejected):
            self.meter.count(REJECTIONS, outcome.reason.value)

    def discarded(self, proposal: Proposal, actor: Actor) -> None:
        """A person discarded ``proposal`` (with its reason, if they gave one), or denied it,
        a denial counted towards its ``deny_at`` (it still waits: ``denied``)."""
        m = proposal.mutation
        denial = next((d for d in proposal.denials if d.by.identity == actor.identity), None)
        waits = proposal.status is ProposalStatus.PENDING
        reason = denial.reason if waits and denial is not None else proposal.reason
        fields: dict[str, Any] = {
            "event": "gateway.decision",
            "outcome": "denied" if waits else "discarded",
            "key": m.key,
            "op": m.op.value,
            "actor": str(actor),
            "mutation_id": m.id,
            "correlation_id": m.correlation_id,
            "proposed_by": str(m.actor),
            "reason": reason or "no reason given",
            "proposal_id": proposal.id,
        }
        if proposal.deny_at is not None:
            fields.update(denials=[str(d.by) for d in proposal.denials], deny_at=proposal.deny_at)
        _log.info("%s %s %s: %s", fields["outcome"], fields["op"], fields["key"], fields["reason"])
        self.redis.xadd(
            self.keys.decisions, {"decision": dumps(fields)}, maxlen=self.keep, approximate=True
        )

    def recent(self, count: int = 100) -> list[dict[str, Any]]:
        rows = stream_rows(self.redis.xrevrange(self.keys.decisions, count=count))
        return [
            {"ms": stream_ms(row_id)} | json.loads(fields["decision"]) for row_id, fields in rows
        ][::-1]
