"""Canonical state: the versioned snapshot and the append-only mutation log of one workspace.

Key names (``keys``), what a state entry, an actor and a mutation are, the one JSON encoding of
values, the limits a commit is held to, the store whose ``commit`` runs one Lua script
(``lua/``, each script with its KEYS/ARGV contract), reading the log, checkpoints and replay.
Nothing here knows of the deliberation loop, the model or an adapter."""

from core.state.actor import PERSON_KINDS, Actor, ActorKind
from core.state.checkpoints import Checkpoints, Image
from core.state.codec import entry_from_fields, entry_meta, text
from core.state.commit_result import Committed, Rejected, RejectReason, outcome_fields
from core.state.entry import Entry
from core.state.keys import (
    WorkspaceKeys,
    validate_session_id,
    validate_state_key,
    validate_workspace,
)
from core.state.limits import DEFAULT_IDEMPOTENCY_TTL_SEC, NO_LIMITS, CommitLimits, RateLimit
from core.state.mutation import MAX_TTL_SEC, Mutation, Op, new_id
from core.state.mutation_log import LogRecord, MutationLog
from core.state.replay import Difference, Replayer, ReplayMismatch, apply, stream_id_le, visible
from core.state.scripts import COMMIT_LUA, READ_LUA, LuaScript, commit_script, read_script
from core.state.store import Snapshot, StateStore, ttl_ms
from core.state.streams import Row, stream_ms, stream_rows
from core.state.value_json import dumps

__all__ = [
    "COMMIT_LUA",
    "DEFAULT_IDEMPOTENCY_TTL_SEC",
    "MAX_TTL_SEC",
    "NO_LIMITS",
    "PERSON_KINDS",
    "READ_LUA",
    "Actor",
    "ActorKind",
    "Checkpoints",
    "CommitLimits",
    "Committed",
    "Difference",
    "Entry",
    "Image",
    "LogRecord",
    "LuaScript",
    "Mutation",
    "MutationLog",
    "Op",
    "RateLimit",
    "RejectReason",
    "Rejected",
    "ReplayMismatch",
    "Replayer",
    "Row",
    "Snapshot",
    "StateStore",
    "WorkspaceKeys",
    "apply",
    "commit_script",
    "dumps",
    "entry_from_fields",
    "entry_meta",
    "new_id",
    "outcome_fields",
    "read_script",
    "stream_id_le",
    "stream_ms",
    "stream_rows",
    "text",
    "ttl_ms",
    "validate_session_id",
    "validate_state_key",
    "validate_workspace",
    "visible",
]
