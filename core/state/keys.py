"""Every Redis key name of a workspace, built in one place.

All keys of one workspace share the hash tag ``{ws:<id>}`` so that one Lua script can touch
them atomically on Redis Cluster.
"""

from __future__ import annotations

import re

__all__ = [
    "DATA_KEYS",
    "WORKSPACE_DIRECTORY",
    "WorkspaceKeys",
    "data_key_pattern",
    "validate_session_id",
    "validate_state_key",
    "validate_workspace",
    "workspace_of_data_key",
]

# the one key outside every workspace: each workspace a platform event reached, with its
# tenant and last activity (a hash; ``deliberate workspaces`` reads it)
WORKSPACE_DIRECTORY = "{deliberate}:workspaces"

# the keys whose presence says a workspace holds data: its state was ever written (versions
# outlive deletes, expiry and compaction), a decision, a proposal, a turn's trace or a rule's
# evaluation. Not the mutation log: opening a workspace makes its stream, empty, for the
# rules' consumer group. Sessions, deliveries, rate windows and metrics come and go with
# activity, and say nothing a listing of workspaces needs.
DATA_KEYS = ("versions", "checkpoint", "decisions", "proposals", "trace", "beats")

_WORKSPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
_STATE_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,199}$")


def validate_workspace(workspace: str) -> str:
    if not _WORKSPACE.match(workspace):
        raise ValueError(
            f"workspace {workspace!r} must be 1-64 characters of letters, digits, '_', '.', '-'"
        )
    return workspace


def data_key_pattern() -> str:
    """SCAN MATCH pattern of every workspace's keys whose name starts as a ``DATA_KEYS`` one
    does (the tag's braces escaped): a superset, which ``workspace_of_data_key`` narrows."""
    return "\\{ws:*\\}:[" + "".join(sorted({name[0] for name in DATA_KEYS})) + "]*"


def workspace_of_data_key(key: str) -> str | None:
    """The workspace whose ``DATA_KEYS`` key ``key`` is, or None for any other key."""
    if not key.startswith("{ws:"):
        return None
    workspace, _, rest = key[4:].partition("}:")
    if rest not in DATA_KEYS or not _WORKSPACE.match(workspace):
        return None
    return workspace


def validate_state_key(key: str) -> str:
    return _name(key, "state key")


def validate_session_id(session_id: str) -> str:
    """Session ids are platform thread ids (``slack:C024BE91L:1700000000.000100``)."""
    return _name(session_id, "session id")


def _name(text: str, what: str) -> str:
    if not _STATE_KEY.match(text):
        raise ValueError(
            f"{what} {text!r} must be 1-200 characters of letters, digits, '_', '.', ':', '-' "
            "and start with a letter or digit"
        )
    return text


class WorkspaceKeys:
    """Redis key names for one workspace."""

    def __init__(self, workspace: str) -> None:
        self.workspace = validate_workspace(workspace)
        self.tag = f"{{ws:{workspace}}}"

    @property
    def every_key(self) -> str:
        """SCAN MATCH pattern of all the workspace's keys (the tag's braces escaped)."""
        return self.tag.replace("{", "\\{").replace("}", "\\}") + "*"

    @property
    def data_keys(self) -> list[str]:
        """The workspace's ``DATA_KEYS``: it holds data when any of them exists."""
        return [f"{self.tag}:{name}" for name in DATA_KEYS]

    def entry(self, key: str) -> str:
        """Hash holding one live state entry (value, updatedAt, updatedBy, expiresAt, meta)."""
        return f"{self.tag}:entry:{key}"

    @property
    def versions(self) -> str:
        """Hash key -> last version; survives deletes and expiry so versions are never reused."""
        return f"{self.tag}:versions"

    @property
    def index(self) -> str:
        """Sorted set of live keys (all score 0) for prefix listing with ZRANGEBYLEX."""
        return f"{self.tag}:keys"

    @property
    def log(self) -> str:
        """Stream: the append-only mutation log."""
        return f"{self.tag}:log"

    def idempotency(self, mutation_id: str) -> str:
        """String naming a mutation id's first commit: "<logId>\nv<version>\n<request>"
        (commit.lua)."""
        return f"{self.tag}:idem:{mutation_id}"

    def rate_window(self, key: str, actor: str) -> str:
        """Sorted set of commit times of one actor on one key (sliding-window rate limit)."""
        return f"{self.tag}:rate:{key}:{actor}"

    @property
    def chain(self) -> str:
        """Hash: the head of the log's hash chain (``n``, ``hash`` and log ``id`` of its newest
        record), which commit.lua reads and moves on with every record it appends."""
        return f"{self.tag}:chain"

    @property
    def checkpoint(self) -> str:
        """String holding the latest replay checkpoint (JSON)."""
        return f"{self.tag}:checkpoint"

    @property
    def checkpoint_at(self) -> str:
        """String: the last log id the checkpoint covers (a checkpoint never moves back)."""
        return f"{self.tag}:checkpoint:at"

    @property
    def compacted(self) -> str:
        """Hash: how far the log was compacted (``through``: the last log id trimmed, whose
        result the checkpoint holds), how many records in all, and when."""
        return f"{self.tag}:compacted"

    @property
    def compacting(self) -> str:
        """String held (with a TTL) by the one process compacting the workspace."""
        return f"{self.tag}:compacting"

    @property
    def decisions(self) -> str:
        """Capped stream of gateway decisions that did not commit (rejections, proposals)."""
        return f"{self.tag}:decisions"

    def session(self, session_id: str) -> str:
        """Hash holding one session (version, data) with a TTL."""
        return f"{self.tag}:session:{session_id}"

    def delivery(self, platform: str, delivery_id: str) -> str:
        """String marking one platform delivery (an event, a message) as handled, with a TTL:
        platforms deliver some things twice."""
        return f"{self.tag}:delivery:{platform}:{delivery_id}"

    def adapter(self, platform: str, name: str) -> str:
        """A key a chat adapter keeps for itself (what clicks did to a Slack message, say)."""
        return f"{self.tag}:adapter:{platform}:{name}"

    @property
    def team_weights(self) -> str:
        """String of the workspace's own perception weights, learned from its clicks
        (``core.perception.team``): never read by another workspace."""
        return f"{self.tag}:perception:team"

    def transcript(self, session_id: str) -> str:
        """Stream of one session's turns, for display and audit only: never read into a model
        call."""
        return f"{self.tag}:transcript:{session_id}"

    @property
    def beat_history(self) -> str:
        """Capped stream of evaluations: which beats fired on each turn, and why."""
        return f"{self.tag}:beats"

    @property
    def trace(self) -> str:
        """Capped stream of loop events (messages, model calls, outcomes) by correlation id."""
        return f"{self.tag}:trace"

    @property
    def metrics(self) -> str:
        """Hash of the workspace's counts (``core.metrics``): every process adds its own; it
        expires a while after the last count."""
        return f"{self.tag}:metrics"

    def bench(self, name: str) -> str:
        """Scratch keys of `deliberate bench` (its raw SET baseline), outside canonical state."""
        return f"{self.tag}:bench:{name}"

    @property
    def timed(self) -> str:
        """Sorted set of the mutation ids of changes made for a while, scored by the moment
        (epoch ms) they revert at: commit.lua adds one with its commit; the timed revert
        sweep (``core/gateway/timed.py``) removes it once it has been dealt with."""
        return f"{self.tag}:timed"

    @property
    def proposals(self) -> str:
        """Sorted set of proposal ids: a pending one scored by its deadline (epoch ms), a
        resolved one by minus the time its key goes (``ProposalBox.due`` drops it then)."""
        return f"{self.tag}:proposals"

    @property
    def break_glass(self) -> str:
        """Hash mutation id -> a break-glass change (JSON), kept for its review."""
        return f"{self.tag}:breakglass"

    def proposal(self, proposal_id: str) -> str:
        """String holding one agent proposal (JSON)."""
        return f"{self.tag}:proposal:{proposal_id}"
