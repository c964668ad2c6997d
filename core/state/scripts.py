"""The Lua scripts of canonical state, in ``core/state/lua/`` with their KEYS/ARGV contracts
written above them. Each runs by its SHA (EVALSHA) and is loaded again when the server has
forgotten it (a restart, SCRIPT FLUSH, a failover)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from redis.exceptions import DataError, NoScriptError

from core.redis.client import shard_of
from core.redis.wire import InFlight, wire_of

if TYPE_CHECKING:
    from redis import Redis

    from core.redis.client import RedisClient, RedisPipeline

__all__ = [
    "COMMIT_LUA",
    "LAST_ID_LUA",
    "READ_LUA",
    "SWEEP_INDEX_LUA",
    "TIME_LUA",
    "TRIM_LOG_LUA",
    "UNDO_LOOKUP_LUA",
    "LuaScript",
    "ScriptCall",
    "Sent",
    "commit_script",
    "read_script",
    "server_ms",
    "sweep_index_script",
    "time_ms",
    "together",
    "trim_log_script",
]


def _source(name: str) -> str:
    return files("core.state").joinpath("lua", name).read_text(encoding="utf-8")


COMMIT_LUA = _source("commit.lua")
READ_LUA = _source("read.lua")
SWEEP_INDEX_LUA = _source("sweep_index.lua")
TRIM_LOG_LUA = _source("trim_log.lua")
UNDO_LOOKUP_LUA = _source("undo_lookup.lua")
# the server's clock, asked of the shard that holds KEYS[1]: a key-less TIME cannot be routed
# on Redis Cluster, nor sent inside a pipeline or a transaction there (send it as
# execute_command("EVAL", TIME_LUA, 1, key): a cluster pipeline has no eval())
TIME_LUA = "return redis.call('TIME')"
# the id of the log's newest record, alone: its fields are not read, so one a decoding client
# could not read (bytes that are not UTF-8) leaves the snapshot readable, for replay to name it
LAST_ID_LUA = (
    "local r = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1) "
    "if r[1] then return r[1][1] end return false"
)


class LuaScript:
    """redis-py's ``Script`` without its per-call bookkeeping (a pipeline check, an import and
    argument copies on every call). ``bench/lua_calls.py`` measured the difference on the read
    script, the store's cheapest: 65 µs per call here against 74 µs through ``Script``, a ratio
    of 1.12-1.13 over two runs (medians of 12 alternating rounds of 2,000 calls; a PING took
    56 µs), so on every read and commit this class saves about a seventh of a round trip.

    On one server it sends on a ``core.redis.wire.Wire`` (redis-py's connection and retry,
    without its per-call layers: ~215,000 instructions a commit's EVALSHA through
    ``execute_command``, ~65,000 on the wire); on a cluster, through the cluster client,
    which routes it to its slot's primary and follows MOVED and failovers."""

    def __init__(self, client: RedisClient, source: str) -> None:
        self.client = client
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()
        self._wire = wire_of(client)

    def __call__(self, keys: list[str], args: list[Any]) -> Any:
        wire = self._wire
        try:
            if wire is not None:
                return wire.call(("EVALSHA", self.sha, len(keys), *keys, *args))
            return self.client.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            return self._whole(keys, args)

    def _whole(self, keys: list[str], args: list[Any]) -> Any:
        """Run by its source, for a server that forgot it (``NOSCRIPT``: it never ran). EVAL
        runs it and leaves it cached, on the one server that holds the keys (a SCRIPT LOAD
        would go to every primary of a cluster, one of them perhaps down)."""
        if self._wire is not None:
            return self._wire.call(("EVAL", self.source, len(keys), *keys, *args))
        return self.client.eval(self.source, len(keys), *keys, *args)

    def send(self, keys: list[str], args: list[Any]) -> Sent:
        """A run sent, its reply read later (``Sent.reply``), while the caller goes on. Where
        it goes through redis-py (a cluster), or the pool is capped too low for a connection
        to wait (``Wire.holds``), it is run here and then, its reply kept."""
        wire = self._wire
        if wire is None or not wire.holds:
            return Sent(self, keys, args, None, self(keys, args))
        return Sent(self, keys, args, wire.send(("EVALSHA", self.sha, len(keys), *keys, *args)))


class Sent:
    """A script's run sent (``LuaScript.send``): its reply is read once, by ``reply``."""

    def __init__(
        self,
        script: LuaScript,
        keys: list[str],
        args: list[Any],
        flight: InFlight | None,
        reply: Any = None,
    ) -> None:
        self._script, self._keys, self._args = script, keys, args
        self._flight = flight
        self._reply = reply
        self._open = True

    def reply(self) -> Any:
        """The script's reply; one the server forgot (``NOSCRIPT``: it never ran) is run by
        its source, as ``LuaScript`` runs it."""
        if not self._open:
            raise DataError("this reply was read already")
        self._open, flight = False, self._flight
        if flight is None:
            return self._reply
        try:
            return flight.reply()
        except NoScriptError:
            return self._script._whole(self._keys, self._args)


@dataclass(frozen=True)
class ScriptCall:
    """One run of a script, its keys and arguments given: made alone (``run``), sent and
    its reply read later (``send``), or sent with others in one round trip (``together``)."""

    script: LuaScript
    keys: list[str]
    args: list[Any]

    def run(self) -> Any:
        return self.script(self.keys, self.args)

    def send(self) -> Sent:
        return self.script.send(self.keys, self.args)


def together(
    client: RedisClient,
    calls: Sequence[ScriptCall],
    then: Callable[[], Sequence[ScriptCall]] | None = None,
) -> list[Any]:
    """The replies of ``calls``, sent by their SHAs in one pipeline (one round trip), in
    order; those the server answered NOSCRIPT, which it never ran, are sent again by EVAL in
    a second. Their keys are one workspace's: on a cluster, the pipeline goes to the shard
    that holds its slot (``shard_of``: redis-py's cluster pipeline asks a server for an
    EVALSHA's keys first, a round trip per script). A call that failed otherwise raises its
    error (the others ran); so does a slot that moved (``MOVED``: the caller sends again).

    ``then``: the calls that follow (their replies after those of ``calls``), asked for
    once ``calls`` are on their way and sent behind them on the same connection, so that
    making them costs no wait of its own (``Wire.call_all``'s ``more``); asked once. Where
    the pipeline goes through redis-py (a cluster), asked first and sent with them."""
    shard = shard_of(client, calls[0].keys[0])
    wire = wire_of(shard) if calls[0].script.client is shard else None  # (one server)
    if then is None or wire is None:
        everything = [*calls, *(() if then is None else then())]
        return _answered(shard, everything, _pipelined(shard, everything, "EVALSHA"))
    later: list[ScriptCall] = []
    asked = then

    def more() -> list[tuple[Any, ...]]:
        later.extend(asked())
        return [_command(call, "EVALSHA") for call in later]

    replies = wire.call_all([_command(call, "EVALSHA") for call in calls], more)
    return _answered(shard, [*calls, *later], replies)


def _answered(shard: Redis, calls: Sequence[ScriptCall], replies: list[Any]) -> list[Any]:
    """``replies`` to ``calls``, those the server answered NOSCRIPT made again by EVAL; an
    error reply raised."""
    missing = [n for n, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
    if missing:
        again = _pipelined(shard, [calls[n] for n in missing], "EVAL")
        for n, reply in zip(missing, again, strict=True):
            replies[n] = reply
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply
    return replies


def _pipelined(shard: Redis, calls: Sequence[ScriptCall], how: str) -> list[Any]:
    wire = wire_of(shard) if calls[0].script.client is shard else None  # (one server)
    if wire is not None:
        return wire.call_all([_command(call, how) for call in calls])
    pipe = shard.pipeline(transaction=False)
    for call in calls:
        pipe.execute_command(*_command(call, how))  # type: ignore[no-untyped-call]
    return list(pipe.execute(raise_on_error=False))


def _command(call: ScriptCall, how: str) -> tuple[Any, ...]:
    script = call.script.sha if how == "EVALSHA" else call.script.source
    return (how, script, len(call.keys), *call.keys, *call.args)


def commit_script(client: RedisClient) -> LuaScript:
    return LuaScript(client, COMMIT_LUA)


def read_script(client: RedisClient) -> LuaScript:
    return LuaScript(client, READ_LUA)


def sweep_index_script(client: RedisClient) -> LuaScript:
    return LuaScript(client, SWEEP_INDEX_LUA)


def trim_log_script(client: RedisClient) -> LuaScript:
    return LuaScript(client, TRIM_LOG_LUA)


def server_ms(client: RedisClient | RedisPipeline, key: str) -> int:
    """The clock (milliseconds) of the server that holds ``key``. On a pipeline in
    immediate mode (after WATCH) it runs on that pipeline's connection."""
    reply = client.execute_command("EVAL", TIME_LUA, 1, key)  # type: ignore[no-untyped-call]
    return time_ms(reply)


def time_ms(reply: Sequence[Any]) -> int:
    """A TIME reply (seconds, microseconds) in milliseconds."""
    seconds, micros = reply
    return int(seconds) * 1000 + int(micros) // 1000
