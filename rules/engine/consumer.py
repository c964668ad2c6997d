"""Reading the mutation log as the ``rules`` consumer group, so the engine's cursor lives in
Redis: a record is acknowledged only after it was handled, and records a dead consumer read
but never acknowledged are claimed by the next one. No committed mutation is skipped.

Each worker process reads as a consumer of its own (host:pid), so the group gains one per
process started; a consumer with nothing pending that has not read for ``DEAD_AFTER_MS`` is
deleted (``prune``). One with pending records is kept: XAUTOCLAIM takes those first."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from redis.client import NEVER_DECODE
from redis.exceptions import ResponseError

from core.state.mutation_log import LogRecord, UnreadableRecord
from core.state.streams import raw_stream_rows
from rules.keys import CONSUMER_GROUP, RuleKeys

if TYPE_CHECKING:
    from core.redis.client import RedisClient

__all__ = ["DEAD_AFTER_MS", "LogConsumer", "ensure_group"]

DEAD_AFTER_MS = 86_400_000  # a consumer that has not read for a day is a worker gone

# KEYS[1] = the mutation log
# ARGV[1] = the group, ARGV[2] = the calling consumer (never deleted), ARGV[3] = idle ms
# -> the names of the consumers deleted: those with no pending record, idle at least ARGV[3]
#    ms. Checked and deleted in one script, so none reads a record between the two (a
#    consumer's pending records would go with it).
PRUNE_SCRIPT = """
local deleted = {}
for _, row in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
  local info = {}
  for i = 1, #row, 2 do
    info[row[i]] = row[i + 1]
  end
  if info['name'] ~= ARGV[2] and tonumber(info['pending']) == 0
      and tonumber(info['idle']) >= tonumber(ARGV[3]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], info['name'])
    deleted[#deleted + 1] = info['name']
  end
end
return deleted
"""


def ensure_group(client: RedisClient, keys: RuleKeys) -> bool:
    """Create the group at the log's end unless it exists; True when created. Deliberate
    does this when it first opens a workspace: a new workspace's rules see every mutation,
    while rules added to a workspace with history do not run on that history. Asked first,
    so that opening a workspace writes nothing once it has its group (every command opens
    one: a read must not wait on a server that holds its writes, as during a failover)."""
    with contextlib.suppress(ResponseError):  # no log yet
        if any(g["name"] == CONSUMER_GROUP for g in client.xinfo_groups(keys.log)):
            return False
    try:
        client.xgroup_create(keys.log, CONSUMER_GROUP, id="$", mkstream=True)
    except ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise
        return False
    return True


class LogConsumer:
    def __init__(self, client: RedisClient, keys: RuleKeys, name: str, claim_idle_ms: int) -> None:
        self.redis = client
        self.keys = keys
        self.name = name
        self.claim_idle_ms = claim_idle_ms
        self._prune = client.register_script(PRUNE_SCRIPT)

    def ensure_group(self) -> bool:
        return ensure_group(self.redis, self.keys)

    def read(
        self, count: int = 100, block_ms: int | None = None
    ) -> list[LogRecord | UnreadableRecord]:
        """Records abandoned by dead consumers first, then new ones; a record that cannot
        be read comes as its ``UnreadableRecord``, for the service to settle. Read as the
        stream holds them (bytes): a field that is not UTF-8 makes its own record unreadable,
        not the whole reply (which the group has delivered, and would deliver again)."""
        claimed = self._claim(count)
        if claimed:
            return claimed
        block = () if block_ms is None else ("BLOCK", block_ms)
        # what ``xreadgroup`` sends, its reply not decoded
        reply: Any = self.redis.execute_command(  # type: ignore[no-untyped-call]
            "XREADGROUP", "GROUP", CONSUMER_GROUP, self.name, "COUNT", count, *block,
            "STREAMS", self.keys.log, ">", **{NEVER_DECODE: True},
        )  # fmt: skip
        rows = raw_stream_rows(reply[0][1]) if reply else []
        return [_parsed(i, f) for i, f in rows]

    def _claim(self, count: int) -> list[LogRecord | UnreadableRecord]:
        # what ``xautoclaim`` sends, its reply not decoded
        reply: Any = self.redis.execute_command(  # type: ignore[no-untyped-call]
            "XAUTOCLAIM", self.keys.log, CONSUMER_GROUP, self.name, self.claim_idle_ms, "0-0",
            "COUNT", count, **{NEVER_DECODE: True},
        )  # fmt: skip
        return [_parsed(i, f) for i, f in raw_stream_rows(reply[1])]

    def ack(self, log_id: str) -> None:
        self.redis.xack(self.keys.log, CONSUMER_GROUP, log_id)

    def deliveries(self, log_id: str) -> int:
        """How many times the group has delivered this record (1 the first time)."""
        rows = self.redis.xpending_range(self.keys.log, CONSUMER_GROUP, log_id, log_id, 1)
        return int(rows[0]["times_delivered"]) if rows else 1

    def prune(self, idle_ms: int = DEAD_AFTER_MS) -> list[str]:
        """Delete the group's dead consumers (nothing pending, idle ``idle_ms`` or more),
        never this one; their names."""
        reply: Any = self._prune(keys=[self.keys.log], args=[CONSUMER_GROUP, self.name, idle_ms])
        return [n.decode() if isinstance(n, bytes) else str(n) for n in reply]

    def pending(self) -> int:
        info = self.redis.xpending(self.keys.log, CONSUMER_GROUP)
        return int(info["pending"])


def _parsed(log_id: str, fields: Mapping[bytes, bytes]) -> LogRecord | UnreadableRecord:
    try:
        return LogRecord.from_raw(log_id, fields)
    except UnreadableRecord as exc:
        return exc
