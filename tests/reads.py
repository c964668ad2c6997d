"""What a test reads straight from Redis to check what the product wrote, where the product
itself has no reader (it keeps no index of pending proposals, and transcripts are write-only)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from redis import Redis

from core.gateway.outcome import Proposal, ProposalStatus
from core.state.keys import WorkspaceKeys
from core.state.streams import stream_rows


def pending_proposals(client: Redis, workspace: str) -> list[Proposal]:
    """Every pending proposal of the workspace, oldest first."""
    keys = WorkspaceKeys(workspace)
    found = [
        Proposal.model_validate_json(str(client.get(name)))
        for name in client.scan_iter(match=keys.proposal("*"), count=1000)
    ]
    pending = [p for p in found if p.status is ProposalStatus.PENDING]
    return sorted(pending, key=lambda p: (p.created_at, p.id))


def transcript(client: Redis, workspace: str, session_id: str) -> list[tuple[str, str]]:
    """Every line of a session's transcript, oldest first, as (speaker, text)."""
    rows = stream_rows(client.xrange(WorkspaceKeys(workspace).transcript(session_id)))
    return [(fields["speaker"], fields["text"]) for _, fields in rows]


def footprints(client: Redis, workspaces: Iterable[str]) -> dict[str, tuple[frozenset[str], int]]:
    """Each workspace's key names and its log's length: compare two to see which workspaces
    a step wrote to (only these names are read, so other runs on the database do not count).
    Its counts are left out: a thread sends them within a second of whichever step made
    them (``core.metrics``)."""
    found = {}
    for name in workspaces:
        keys = WorkspaceKeys(name)
        names = frozenset(str(k) for k in client.scan_iter(match=keys.every_key, count=1000))
        found[name] = (names - {keys.metrics}, int(client.xlen(keys.log)))
    return found


def written(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    """The workspaces whose footprint changed between two ``footprints``."""
    return {name for name in after if after[name] != before.get(name)}
