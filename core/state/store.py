"""The canonical state store of one workspace: reads of the snapshot and the atomic commit.

Writes go through ``commit`` only, which runs commit.lua. Callers outside the core reach it
through the MutationGateway, which applies policy first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from core.errors import StoreError
from core.state.codec import entry_from_fields, entry_meta
from core.state.commit_result import Committed, Rejected, RejectReason
from core.state.entry import Entry
from core.state.keys import WorkspaceKeys
from core.state.limits import DEFAULT_IDEMPOTENCY_TTL_SEC, NO_LIMITS, CommitLimits
from core.state.mutation import Mutation, Op
from core.state.scripts import commit_script, read_script
from core.state.streams import stream_rows
from core.state.value_json import dumps

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["Snapshot", "StateStore", "ttl_ms"]

_RESULT_FIELDS = ("value", "updatedAt", "updatedBy", "expiresAt", "meta")


@dataclass(frozen=True)
class Snapshot:
    """A consistent read of the whole workspace: live entries, every key's last version
    (deleted and expired keys included), the last log id it reflects and the server time."""

    entries: dict[str, Entry]
    versions: dict[str, int]
    last_log_id: str | None
    at_ms: int


def _server_ms(time_reply: Sequence[Any]) -> int:
    seconds, micros = time_reply
    return int(seconds) * 1000 + int(micros) // 1000


def _live(entry: Entry | None, now_ms: int) -> Entry | None:
    if entry is None or (entry.expires_at is not None and entry.expires_at <= now_ms):
        return None
    return entry


class StateStore:
    def __init__(
        self,
        client: Redis,
        workspace: str,
        *,
        idempotency_ttl_sec: int = DEFAULT_IDEMPOTENCY_TTL_SEC,
    ) -> None:
        self.redis = client
        self.keys = WorkspaceKeys(workspace)
        self.idempotency_ttl_ms = idempotency_ttl_sec * 1000
        self._commit = commit_script(client)
        self._read = read_script(client)

    @property
    def workspace(self) -> str:
        return self.keys.workspace

    def get(self, key: str) -> Entry | None:
        """The live entry of ``key``, or None when absent, deleted or expired."""
        return self.read(key)[1]

    def read(self, key: str) -> tuple[int, Entry | None]:
        """The key's version and live entry in one round trip; an absent key still has a
        version (its last one, 0 if never written), which is what a CAS must expect."""
        reply = self._read(keys=[self.keys.entry(key), self.keys.versions], args=[key])
        version = int(reply[0])
        if len(reply) == 1:
            return version, None
        fields = dict(zip(_RESULT_FIELDS, reply[1:], strict=True))
        return version, entry_from_fields(key, version, fields)

    def version(self, key: str) -> int:
        """The key's last version (0 if never written); kept after delete and expiry."""
        return int(self.redis.hget(self.keys.versions, key) or 0)

    def committed(self, mutation_id: str) -> Committed | None:
        """The first result of the mutation with this id, as committing it again would answer
        it (``duplicate``), while its idempotency record lasts; None when no commit of it is
        on record (never committed, or the record expired). Nothing is written."""
        first = self.redis.get(self.keys.idempotency(mutation_id))
        if first is None:
            return None
        log_id, _, value = str(first).partition("\n")
        rows = stream_rows(self.redis.xrange(self.keys.log, log_id, log_id))
        if not rows:
            raise StoreError(
                f"mutation {mutation_id} was committed as {log_id}, which the log no longer holds"
            )
        record = rows[0][1]
        logged = Mutation.model_validate_json(record["mutation"])
        return Committed(
            logged,
            int(record["version"]),
            log_id,
            int(record["ts"]),
            value or None,
            _int(record.get("expiresAt")),
            entry_meta(logged),
            duplicate=True,
        )

    def entries(self, prefix: str = "") -> list[Entry]:
        """Live entries whose key starts with ``prefix``, in key order."""
        start = f"[{prefix}" if prefix else "-"
        end = f"[{prefix}\xff" if prefix else "+"
        names = [str(n) for n in self.redis.zrangebylex(self.keys.index, start, end)]
        return list(self._read_entries(names).values())

    def snapshot(self, attempts: int = 20) -> Snapshot:
        """Everything, read in one MULTI so that no commit lands half-way through; read again
        only when a key was first written between listing the keys and reading them."""
        keys = self.keys
        for _ in range(attempts):
            names = sorted(str(k) for k in self.redis.hkeys(keys.versions))
            pipe = self.redis.pipeline(transaction=True)
            pipe.hgetall(keys.versions)
            for name in names:
                pipe.hgetall(keys.entry(name))
            pipe.xrevrange(keys.log, count=1)
            pipe.time()
            raw, *hashes, last, now = pipe.execute()
            versions = {str(k): int(v) for k, v in raw.items()}
            if sorted(versions) != names:
                continue
            now_ms = _server_ms(now)
            entries = {}
            for name, fields in zip(names, hashes, strict=True):
                entry = _live(entry_from_fields(name, versions[name], fields), now_ms)
                if entry is not None:
                    entries[name] = entry
            return Snapshot(entries, versions, str(last[0][0]) if last else None, now_ms)
        raise StoreError(
            f"keys kept appearing in workspace {self.workspace} during {attempts} reads"
        )

    def _read_entries(self, names: list[str]) -> dict[str, Entry]:
        if not names:
            return {}
        pipe = self.redis.pipeline(transaction=False)
        for name in names:
            pipe.hgetall(self.keys.entry(name))
        pipe.hmget(self.keys.versions, names)
        pipe.time()
        *hashes, versions, now = pipe.execute()
        now_ms = _server_ms(now)
        out: dict[str, Entry] = {}
        for name, fields, version in zip(names, hashes, versions, strict=True):
            entry = _live(entry_from_fields(name, int(version or 0), fields), now_ms)
            if entry is not None:
                out[name] = entry
        return out

    def commit(self, mutation: Mutation, limits: CommitLimits = NO_LIMITS) -> Committed | Rejected:
        """Apply one mutation atomically; policy is the gateway's job, not this method's."""
        keys = self.keys
        rate = limits.rate
        meta = entry_meta(mutation)
        reply = self._commit(
            keys=[
                keys.entry(mutation.key),
                keys.versions,
                keys.index,
                keys.log,
                keys.idempotency(mutation.id),
                keys.rate_window(mutation.key, mutation.actor.identity),
            ],
            args=[
                mutation.key,
                mutation.op.value,
                "" if mutation.op is Op.DELETE else mutation.value_json,
                "" if mutation.expected_version is None else mutation.expected_version,
                "" if mutation.ttl_sec is None else ttl_ms(mutation.ttl_sec),
                mutation.to_json(),
                mutation.actor.json_text,
                dumps(meta),
                self.idempotency_ttl_ms,
                rate.max if rate else 0,
                rate.window_ms if rate else 0,
                mutation.id,
                limits.max_bytes,
                limits.max_items,
            ],
        )
        return self._outcome(mutation, meta, reply)

    def _outcome(
        self, mutation: Mutation, meta: dict[str, JsonValue], reply: list[Any]
    ) -> Committed | Rejected:
        status = reply[0]
        if status == "ok":
            _, version, value, ts, expires, log_id = reply
            return Committed(mutation, int(version), log_id, int(ts), value, _int(expires), meta)
        if status == "duplicate":  # the first commit's result, rebuilt from its log record
            _, version, value, ts, logged_json, expires, log_id = reply
            logged = Mutation.model_validate_json(logged_json)
            return Committed(
                logged,
                int(version),
                log_id,
                int(ts),
                value,
                _int(expires),
                entry_meta(logged),
                duplicate=True,
            )
        if status == "lost":
            raise StoreError(
                f"mutation {mutation.id} was committed as {reply[1]}, which the log no longer holds"
            )
        if status == "conflict":
            version = int(reply[1])
            fields = dict(zip(_RESULT_FIELDS, reply[2:7], strict=True))
            latest = entry_from_fields(mutation.key, version, fields)
            return Rejected(
                mutation,
                RejectReason.CONFLICT,
                f"{mutation.key} is at version {version}, not {mutation.expected_version}",
                latest=latest,
                version=version,
            )
        if status == "not_found":
            message = f"{mutation.key} is not set"
            return Rejected(mutation, RejectReason.NOT_FOUND, message, version=int(reply[1]))
        if status == "type":
            return Rejected(mutation, RejectReason.TYPE, str(reply[1]))
        if status == "schema":
            return Rejected(mutation, RejectReason.SCHEMA, str(reply[1]))
        if status == "rate_limited":
            wait = int(reply[1])
            return Rejected(
                mutation,
                RejectReason.RATE_LIMITED,
                f"too many changes to {mutation.key}; try again in {wait / 1000:.1f}s",
                retry_after_ms=wait,
            )
        raise StoreError(f"commit script answered {reply!r}")


def ttl_ms(ttl_sec: float) -> int:
    """A ttl in whole milliseconds, at least one (replay computes expiry the same way)."""
    return max(1, round(ttl_sec * 1000))


def _int(text: str | None) -> int | None:
    return int(text) if text else None
