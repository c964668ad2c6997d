"""The canonical state store of one workspace: reads of the snapshot and the atomic commit.

Writes go through ``commit`` only, which runs commit.lua. Callers outside the core reach it
through the MutationGateway, which applies policy first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redis.exceptions import NoScriptError

from core.errors import StoreError
from core.redis.client import INTERRUPTED, interrupted, resend, shard_of
from core.state.codec import UnreadableEntry, entry_from_fields, readable_entry
from core.state.commit_call import RESULT_FIELDS, commit_call, first_run, outcome_of, unsaved
from core.state.commit_result import Committed, FirstCommit, Rejected, first_result
from core.state.entry import Entry, KeyPage
from core.state.keys import WorkspaceKeys
from core.state.limits import (
    DEFAULT_IDEMPOTENCY_TTL_SEC,
    DEFAULT_PREV_MAX_BYTES,
    LOCAL_DURABILITY,
    NO_LIMITS,
    CommitLimits,
    CommitUnconfirmed,
    Durability,
    NotReplicated,
)
from core.state.mutation import Mutation, revert_id
from core.state.scripts import (
    LAST_ID_LUA,
    TIME_LUA,
    ScriptCall,
    commit_script,
    read_script,
    time_ms,
)
from core.state.streams import stream_rows
from core.time_phrases import TimedChange

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["Snapshot", "StateStore"]


@dataclass(frozen=True)
class Snapshot:
    """A consistent read of the whole workspace: live entries, every key's last version
    (deleted and expired keys included), the last log id it reflects and the server time.
    ``skipped``: entries that could not be read (left out of ``entries``)."""

    entries: dict[str, Entry]
    versions: dict[str, int]
    last_log_id: str | None
    at_ms: int
    skipped: tuple[UnreadableEntry, ...] = ()


def _live(entry: Entry | None, now_ms: int) -> Entry | None:
    if entry is None or (entry.expires_at is not None and entry.expires_at <= now_ms):
        return None
    return entry


class StateStore:
    def __init__(
        self,
        client: RedisClient,
        workspace: str,
        *,
        idempotency_ttl_sec: int = DEFAULT_IDEMPOTENCY_TTL_SEC,
        prev_max_bytes: int = DEFAULT_PREV_MAX_BYTES,
        durability: Durability = LOCAL_DURABILITY,
    ) -> None:
        self.redis = client
        self.keys = WorkspaceKeys(workspace)
        self.idempotency_ttl_ms = idempotency_ttl_sec * 1000
        self.prev_max_bytes = prev_max_bytes
        self.durability = durability
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
        version (its last one, 0 if never written), which is what a CAS must expect.
        ``UnreadableEntry`` when the stored entry cannot be read (``get`` too)."""
        reply = self._read(keys=[self.keys.entry(key), self.keys.versions], args=[key])
        version = int(reply[0])
        if len(reply) == 1:
            return version, None
        fields = dict(zip(RESULT_FIELDS, reply[1:], strict=True))
        return version, entry_from_fields(key, version, fields)

    def version(self, key: str) -> int:
        """The key's last version (0 if never written); kept after delete and expiry."""
        return int(self.redis.hget(self.keys.versions, key) or 0)

    def reverts_at(self, mutation_ids: list[str]) -> dict[str, int]:
        """When each of ``mutation_ids`` (changes made for a while) reverts by itself, for
        those whose revert is still to come (``core/gateway/timed.py``)."""
        if not mutation_ids:
            return {}
        scores = self.redis.zmscore(self.keys.timed, mutation_ids)
        return {m: int(s) for m, s in zip(mutation_ids, scores, strict=True) if s is not None}

    def timed(self, entries: Iterable[Entry]) -> dict[str, TimedChange]:
        """By key, each of ``entries`` set by a change whose revert waits (``reverts_at``),
        and each a timed revert wrote (its own mutation, ``reverted`` at the entry's time)."""
        found: dict[str, TimedChange] = {}
        setters: dict[str, str] = {}
        for entry in entries:
            made, undone = entry.meta.get("mutationId"), entry.meta.get("reverts")
            if entry.meta.get("timed") and isinstance(undone, str) and isinstance(made, str):
                found[entry.key] = TimedChange(undone, entry.updated_at, made, "reverted")
            elif isinstance(made, str):
                setters[made] = entry.key
        for mutation_id, at in self.reverts_at(list(setters)).items():
            found[setters[mutation_id]] = TimedChange(mutation_id, at, revert_id(mutation_id))
        return found

    def committed(self, mutation_id: str, request: Mutation | None = None) -> Committed | None:
        """The first result of the mutation with this id, as committing it again would answer
        it (``duplicate``), while its idempotency record lasts; None when no commit of it is
        on record (never committed, or the record expired). ``request``: the mutation as
        asked, which stands in for its log record once that was compacted away. Nothing is
        written."""
        first = self.redis.get(self.keys.idempotency(mutation_id))
        if first is None:
            return None
        log_id, version = first_run(str(first))
        rows = stream_rows(self.redis.xrange(self.keys.log, log_id, log_id))
        fields = rows[0][1] if rows else {}
        if rows:
            logged = Mutation.model_validate_json(fields["mutation"])
            version = "v" + fields["version"]
        elif request is not None:
            logged = request
        else:
            raise StoreError(
                f"mutation {mutation_id} was committed as {log_id}, which the log no longer "
                "holds (compacted)"
            )
        now_version, now_value, now_expires = self.read_raw(logged.key)
        return first_result(
            logged,
            FirstCommit(
                log_id,
                version,
                fields.get("mutation"),
                fields.get("ts"),
                fields.get("expiresAt") or None,
                fields.get("prev") or None,
                "prevSha1" not in fields,
                now_version,
                now_value,
                now_expires,
            ),
        )

    def read_raw(self, key: str) -> tuple[int, str | None, str | None]:
        """The key's version, stored value text and expiry, live or not (None: absent)."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.hget(self.keys.versions, key)
        pipe.hmget(self.keys.entry(key), "value", "expiresAt")
        version, (value, expires) = pipe.execute()
        return int(version or 0), value, expires

    def entries(
        self, prefix: str = "", skipped: list[UnreadableEntry] | None = None
    ) -> list[Entry]:
        """Live entries whose key starts with ``prefix``, in key order. One that cannot be
        read is left out, logged and added to ``skipped`` (when given)."""
        start = f"[{prefix}" if prefix else "-"
        end = f"[{prefix}\xff" if prefix else "+"
        names = [str(n) for n in self.redis.zrangebylex(self.keys.index, start, end)]
        return list(self._read_entries(names, [] if skipped is None else skipped).values())

    def page(self, prefix: str, after: str, limit: int, skipped: list[UnreadableEntry]) -> KeyPage:
        """The live entries of the next ``limit`` keys of the index that start with
        ``prefix``, after the key ``after`` ("": from the first), in key order: only those
        are read. One that cannot be read is left out and added to ``skipped``."""
        high = f"[{prefix}\xff" if prefix else "+"
        low = f"({after}" if after and after >= prefix else f"[{prefix}" if prefix else "-"
        pipe = self.redis.pipeline(transaction=True)
        pipe.zrangebylex(self.keys.index, low, high, start=0, num=limit)
        pipe.zlexcount(self.keys.index, low, high)
        found, count = pipe.execute()
        names = [str(n) for n in found]
        entries = list(self._read_entries(names, skipped).values())
        more = int(count) - len(names)
        return KeyPage(entries, names[-1] if more > 0 else None, more)

    def snapshot(self, attempts: int = 20) -> Snapshot:
        """Everything, read in one MULTI so that no commit lands half-way through; read again
        only when a key was first written between listing the keys and reading them. An
        entry that cannot be read is left out and listed in ``skipped``."""
        keys = self.keys
        for _ in range(attempts):
            names = sorted(str(k) for k in self.redis.hkeys(keys.versions))
            pipe = self.redis.pipeline(transaction=True)
            pipe.hgetall(keys.versions)
            for name in names:
                pipe.hgetall(keys.entry(name))
            pipe.execute_command("EVAL", LAST_ID_LUA, 1, keys.log)
            # the clock of the workspace's own shard (see TIME_LUA)
            pipe.execute_command("EVAL", TIME_LUA, 1, keys.versions)
            raw, *hashes, last, now = pipe.execute()
            versions = {str(k): int(v) for k, v in raw.items()}
            if sorted(versions) != names:
                continue
            now_ms = time_ms(now)
            entries: dict[str, Entry] = {}
            skipped: list[UnreadableEntry] = []
            for name, fields in zip(names, hashes, strict=True):
                entry = _live(readable_entry(name, versions[name], fields, skipped), now_ms)
                if entry is not None:
                    entries[name] = entry
            last_id = str(last) if last else None
            return Snapshot(entries, versions, last_id, now_ms, tuple(skipped))
        raise StoreError(
            f"keys kept appearing in workspace {self.workspace} during {attempts} reads"
        )

    def _read_entries(self, names: list[str], skipped: list[UnreadableEntry]) -> dict[str, Entry]:
        if not names:
            return {}
        pipe = self.redis.pipeline(transaction=False)
        for name in names:
            pipe.hgetall(self.keys.entry(name))
        pipe.hmget(self.keys.versions, names)
        pipe.execute_command("EVAL", TIME_LUA, 1, self.keys.versions)
        *hashes, versions, now = pipe.execute()
        now_ms = time_ms(now)
        out: dict[str, Entry] = {}
        for name, fields, version in zip(names, hashes, versions, strict=True):
            entry = _live(readable_entry(name, int(version or 0), fields, skipped), now_ms)
            if entry is not None:
                out[name] = entry
        return out

    def commit(self, mutation: Mutation, limits: CommitLimits = NO_LIMITS) -> Committed | Rejected:
        """Apply one mutation atomically; policy is the gateway's job, not this method's."""
        keys, args = commit_call(
            self.keys, mutation, limits, self.idempotency_ttl_ms, self.prev_max_bytes
        )
        reply, confirmed = self._send(mutation, keys, args)
        outcome = self.answered(mutation, reply)
        assert outcome is not None  # (unsaved: only a commit made on a save)
        wanted = self.durability.replicas
        if wanted and isinstance(outcome, Committed) and confirmed < wanted:
            raise NotReplicated(outcome, confirmed, wanted, self.durability.timeout_ms)
        return outcome

    def commit_on(
        self,
        mutation: Mutation,
        limits: CommitLimits,
        session_key: str,
        token: str,
        deadline: int | None = None,
        say_prev: bool = True,
    ) -> ScriptCall:
        """``commit``, made only on a session's save (``session_key``'s hash keeps ``token``
        among its last saves' tokens: commit.lua's KEYS[9]), to send in the same round trip
        as that save, after it (``SessionStore.store_along``); read its reply with
        ``answered``: it says what the key held before (``Committed.prev_json``: an Undo of
        it needs to ask nothing first; ``say_prev`` False: not, a secret key's value).
        ``deadline``: refused as expired at or past it
        (epoch ms of the server's clock). Not for a store whose commits wait for replicas
        (``durability``)."""
        assert not self.durability.replicas and token and " " not in token
        keys, args = commit_call(
            self.keys,
            mutation,
            limits,
            self.idempotency_ttl_ms,
            self.prev_max_bytes,
            token,
            deadline,
            say_prev,
        )
        return ScriptCall(self._commit, [*keys, session_key], args)

    def answered(self, mutation: Mutation, reply: list[Any]) -> Committed | Rejected | None:
        """What the commit script's ``reply`` says of ``mutation``; None: made on a save
        that did not land (``commit_on``), nothing was written. A duplicate whose first run
        was this very request's (its arguments sent again, by ``_send`` or the runtime, or
        inside the client: its id, ``commit_call``), which landed and whose answer was lost,
        is this commit, not a repeat; another request of the same mutation id (a second
        click on the same candidate, a second approver's apply of a proposal, a job run
        again) is told it was made already."""
        if unsaved(reply):
            return None
        return outcome_of(mutation, reply)

    def _send(self, mutation: Mutation, keys: list[str], args: list[Any]) -> tuple[Any, int]:
        """The commit script's reply, and how many replicas confirmed it when any are asked
        for. Cut off (the server died, its replica is being promoted, the slot moved), it is
        sent again with the same arguments until ``durability.retry_sec`` runs out: the
        idempotency record, written by the same script, makes a second run answer with the
        first one's result instead of applying it twice."""

        def send() -> tuple[Any, int]:
            if not self.durability.replicas:
                return self._commit(keys=keys, args=args), 0
            return self._commit_and_wait(keys, args)

        budget = self.durability.retry_sec
        try:
            reply, confirmed = resend(send, self.redis, budget)
        except INTERRUPTED as error:
            if not interrupted(error):
                raise
            raise CommitUnconfirmed(mutation.key, mutation.id, budget, error) from error
        return reply, confirmed

    def _commit_and_wait(self, keys: list[str], args: list[Any]) -> tuple[Any, int]:
        """The commit script, then ``WAIT`` on the same connection (WAIT counts the replicas
        that have this connection's writes: sent on another, it would prove nothing): on a
        cluster, a connection to the primary of the workspace's slot. A duplicate writes
        nothing, so its WAIT proves only that the replicas are there."""
        shard = shard_of(self.redis, keys[1])
        for _ in range(2):
            pipe = shard.pipeline(transaction=False)
            pipe.evalsha(self._commit.sha, len(keys), *keys, *args)
            pipe.wait(self.durability.replicas, self.durability.timeout_ms)
            reply, confirmed = pipe.execute(raise_on_error=False)
            if isinstance(reply, NoScriptError):  # not run: load it and send both again
                shard.script_load(self._commit.source)
                continue
            for part in (reply, confirmed):
                if isinstance(part, Exception):
                    raise part
            return reply, int(confirmed)
        raise StoreError("the commit script could not be loaded")
