"""The model's tools: ``getState``, ``getStatePrefix``, ``proposeMutation`` and
``compareAndSet``, offered as function tools to the model responder.

Reads never return a ``secret`` key (not even whether it exists). Writes go through the
gateway as the ``agent`` actor, so they become proposals for a person unless policy says
``agent: commit``. Arguments are whatever the model wrote: a bad call gets an error result,
never an exception, and changes nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from core.deliberation.memory import ProposalRef
from core.gateway.durations import duration_sec
from core.gateway.edits import MAX_EDIT_CHARS, value_text
from core.gateway.mutation_gateway import MutationGateway
from core.gateway.outcome import Outcome, Pending
from core.llm.replies import ToolCall, first_error
from core.state import value_json
from core.state.actor import Actor
from core.state.codec import UnreadableEntry
from core.state.entry import Entry
from core.state.mutation import Mutation, Op

__all__ = ["AgentTools", "ToolResult"]

MAX_KEYS = 20
MAX_ENTRIES = 50


class _GetState(BaseModel):
    model_config = ConfigDict(extra="forbid")
    keys: list[str] = Field(min_length=1, max_length=MAX_KEYS)


class _GetStatePrefix(BaseModel):
    model_config = ConfigDict(extra="forbid")
    prefix: str = Field(max_length=200)


class _ProposeMutation(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    op: Literal["set", "delete", "append", "incr"]
    key: str
    value: JsonValue = None
    reason: str = Field(default="", max_length=1000)
    ttl_sec: float | None = Field(default=None, alias="ttlSec")
    for_: str | None = Field(
        default=None,
        alias="for",
        max_length=20,
        description="a change for a while: how long it lasts once applied, then it reverts "
        "by itself (30m, 2h, 1d, 1h30m)",
    )


class _CompareAndSet(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    key: str
    expected_version: int = Field(alias="expectedVersion", ge=0)
    value: JsonValue


def _function(name: str, description: str, model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True)
    schema.pop("title", None)
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": schema},
    }


DEFINITIONS = [
    _function("getState", "Read state entries by key (value and version).", _GetState),
    _function(
        "getStatePrefix", "Read the state entries whose key starts with a prefix.", _GetStatePrefix
    ),
    _function(
        "proposeMutation",
        "Propose a change to shared state. A person with the right role decides whether it "
        "is applied; it is not applied by calling this.",
        _ProposeMutation,
    ),
    _function(
        "compareAndSet",
        "Propose setting a key only if it is still at expectedVersion (0: never written).",
        _CompareAndSet,
    ),
]


@dataclass(frozen=True)
class ToolResult:
    name: str
    ok: bool
    result: JsonValue
    proposal: ProposalRef | None = None
    outcome: Outcome | None = None

    def for_model(self) -> dict[str, JsonValue]:
        return {"tool": self.name, "ok": self.ok, "result": self.result}


class AgentTools:
    def __init__(self, gateway: MutationGateway, agent: Actor) -> None:
        self.gateway = gateway
        self.agent = agent

    def definitions(self) -> list[dict[str, Any]]:
        return DEFINITIONS

    def call(self, call: ToolCall, correlation_id: str, asker: Actor | None = None) -> ToolResult:
        """``asker``: the person the call is made for (a proposal is theirs: four eyes)."""
        try:
            args = value_json.loads(call.arguments or "{}")
        except json.JSONDecodeError as exc:
            return ToolResult(call.name, False, f"arguments are not JSON: {exc.msg}")
        except ValueError as exc:  # NaN, Infinity, a number too large for a float
            return ToolResult(call.name, False, f"arguments are not JSON: {exc}")
        except RecursionError:
            return ToolResult(call.name, False, "arguments are not JSON: nested too deeply")
        try:
            if call.name == "getState":
                return self._get_state(_GetState.model_validate(args))
            if call.name == "getStatePrefix":
                return self._get_prefix(_GetStatePrefix.model_validate(args))
            if call.name == "proposeMutation":
                args = _ProposeMutation.model_validate(args)
                return self._propose(call.name, args, correlation_id, None, asker)
            if call.name == "compareAndSet":
                cas = _CompareAndSet.model_validate(args)
                write = _ProposeMutation(op="set", key=cas.key, value=cas.value)
                return self._propose(call.name, write, correlation_id, cas.expected_version, asker)
        except ValidationError as exc:
            return ToolResult(call.name, False, f"bad arguments: {first_error(exc)}")
        return ToolResult(call.name, False, f"no tool named {call.name[:60]!r}")

    def _visible(self, entries: list[Entry]) -> list[JsonValue]:
        shown = self.gateway.policy.visible_to_agent(entries)
        return [{"key": e.key, "value": e.value, "version": e.version} for e in shown]

    def _get_state(self, args: _GetState) -> ToolResult:
        found: dict[str, JsonValue] = {}
        for key in args.keys:
            entry = None
            if not self.gateway.policy.is_secret(key):
                try:
                    entry = self.gateway.store.get(key)
                except ValueError:  # not a valid key name: it cannot exist
                    entry = None
                except UnreadableEntry:  # planted past the limits: unreadable is absent here
                    entry = None
            found[key] = self._visible([entry])[0] if entry is not None else None
        return ToolResult("getState", True, found)

    def _get_prefix(self, args: _GetStatePrefix) -> ToolResult:
        entries = self.gateway.store.entries(args.prefix)
        return ToolResult("getStatePrefix", True, self._visible(entries)[:MAX_ENTRIES])

    def _propose(
        self,
        name: str,
        args: _ProposeMutation,
        correlation_id: str,
        expected_version: int | None = None,
        asker: Actor | None = None,
    ) -> ToolResult:
        meta: dict[str, JsonValue] = {}
        if asker is not None:
            meta["requestedBy"] = asker.model_dump(mode="json")
        try:
            mutation = Mutation(
                op=Op(args.op),
                key=args.key,
                value=args.value,
                actor=self.agent,
                reason=args.reason,
                ttl_sec=args.ttl_sec,
                for_sec=None if args.for_ is None else duration_sec(args.for_),
                expected_version=expected_version,
                correlation_id=correlation_id,
                meta=meta,
            )
        except (ValidationError, ValueError) as exc:
            message = first_error(exc) if isinstance(exc, ValidationError) else str(exc)
            return ToolResult(name, False, f"bad mutation: {message}")
        outcome = self.gateway.propose(mutation)
        # the model asked to write, not to read: no value goes back (a secret key's included)
        summary = {k: v for k, v in outcome.to_dict().items() if k not in ("entry", "latest")}
        proposal = None
        if isinstance(outcome, Pending):
            rule = self.gateway.policy.rule_for(mutation.key)
            secret = self.gateway.policy.is_secret(mutation.key)  # the one test of secrecy
            glass = self.gateway.policy.break_glass(mutation.key)
            proposal = ProposalRef(
                id=outcome.proposal.id,
                summary=outcome.proposal.summary(secret)[:300],
                protected=rule is not None and rule.protected,
                value="" if secret else _editable(outcome.proposal.current_value),
                editable=mutation.op is not Op.DELETE,
                break_glass=None if glass is None else glass.role,
                expires_at=outcome.proposal.expires_at,
                for_sec=outcome.proposal.mutation.for_sec,
            )
        return ToolResult(name, outcome.name != "rejected", summary, proposal, outcome)


def _editable(value: JsonValue) -> str:
    """The proposed value as an edit box shows it (empty when too long to edit there)."""
    text = value_text(value)
    return text if len(text) <= MAX_EDIT_CHARS else ""
