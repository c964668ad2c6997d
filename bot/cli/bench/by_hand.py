"""The commit's own Redis writes made by hand: what commit.lua reads and writes for a ``set``,
key by key, sent as one MULTI/EXEC pipeline by the client. The baseline the commit script is
measured against in ``deliberate bench commits``.

A transaction cannot branch on what it reads, so the pipeline makes the script's reads and
writes without its checks: it writes the version the writer expects, hashes the chain over
the last hash this writer made (not the head it reads) and, not knowing the log id before
the XADD, stores the mutation id in its place. Its keys are scratch keys of the bench
(``WorkspaceKeys.bench``), never the workspace's canonical state.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from core.redis.client import RedisClient, shard_of
from core.state.chain.links import genesis, link_hash_text
from core.state.codec import entry_meta
from core.state.keys import WorkspaceKeys
from core.state.mutation import Mutation
from core.state.value_json import dumps

__all__ = ["HandKeys", "HandWriter"]

_FIELDS = ("value", "updatedAt", "updatedBy", "expiresAt", "meta")


@dataclass(frozen=True)
class HandKeys:
    """The scratch keys that stand for commit.lua's KEYS, in one workspace's hash tag."""

    keys: WorkspaceKeys

    def entry(self, key: str) -> str:
        return self.keys.bench(f"hand:entry:{key}")

    @property
    def versions(self) -> str:
        return self.keys.bench("hand:versions")

    @property
    def index(self) -> str:
        return self.keys.bench("hand:keys")

    @property
    def log(self) -> str:
        return self.keys.bench("hand:log")

    @property
    def chain(self) -> str:
        return self.keys.bench("hand:chain")

    def idempotency(self, mutation_id: str) -> str:
        return self.keys.bench(f"hand:idem:{mutation_id}")

    @property
    def pattern(self) -> str:
        """SCAN MATCH pattern of every one of them (to delete them after the bench)."""
        return self.keys.every_key.replace("*", "") + ":bench:hand:*"


@dataclass
class HandWriter:
    """One writer's hand-made commits; it remembers the chain it made and the keys it
    added to the index, as the script learns them from what it reads."""

    client: RedisClient
    keys: HandKeys
    idempotency_ttl_ms: int
    chain: tuple[int, str] = (0, "")
    indexed: set[str] = field(default_factory=set)

    def write(self, mutation: Mutation, version: int, prev: str, now_ms: int) -> list[object]:
        """``mutation`` (a set) made by hand at ``version``: its replies, in order."""
        keys, key = self.keys, mutation.key
        value, snow, sversion = mutation.value_json, str(now_ms), str(version)
        record = {
            "mutation": mutation.to_json(),
            "version": sversion,
            "ts": snow,
            "expiresAt": "",
            "prev": prev,
        }
        n, last = self.chain
        n += 1
        digest = link_hash_text(last or genesis(keys.log), n, record)
        record["chain"] = f"{n}:{digest}"
        self.chain = (n, digest)
        idem = keys.idempotency(mutation.id)
        pipe = shard_of(self.client, keys.versions).pipeline(transaction=True)
        pipe.get(idem)
        pipe.time()
        pipe.hmget(keys.entry(key), _FIELDS)
        pipe.hget(keys.versions, key)
        pipe.hmget(keys.chain, "n", "hash")
        pipe.hset(keys.versions, key, sversion)
        entry = {
            "value": value,
            "updatedAt": snow,
            "updatedBy": mutation.actor.json_text,
            "meta": dumps(entry_meta(mutation)),
        }
        pipe.hset(keys.entry(key), mapping=entry)  # type: ignore[arg-type]
        if key not in self.indexed:
            pipe.zadd(keys.index, {key: 0})
            self.indexed.add(key)
        pipe.xadd(keys.log, record)  # type: ignore[arg-type]
        pipe.hset(keys.chain, mapping={"n": n, "hash": digest, "id": mutation.id})
        # (the request's own id after the version, as commit.lua keeps it)
        request = os.urandom(8).hex()
        pipe.set(idem, f"{mutation.id}\nv{sversion}\n{request}", px=self.idempotency_ttl_ms)
        return list(pipe.execute())
