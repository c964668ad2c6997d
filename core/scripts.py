"""Lua scripts shipped with the core, each run by its SHA (EVALSHA) and loaded again when the
server has forgotten it (a restart, SCRIPT FLUSH, a failover)."""

from __future__ import annotations

import hashlib
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from redis.exceptions import NoScriptError

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["COMMIT_LUA", "READ_LUA", "LuaScript", "commit_script", "read_script"]

COMMIT_LUA = files("core").joinpath("commit.lua").read_text(encoding="utf-8")
READ_LUA = files("core").joinpath("read.lua").read_text(encoding="utf-8")


class LuaScript:
    """Like redis-py's Script, minus its per-call bookkeeping (this is the hot path)."""

    def __init__(self, client: Redis, source: str) -> None:
        self.client = client
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    def __call__(self, keys: list[str], args: list[Any]) -> Any:
        try:
            return self.client.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            self.client.script_load(self.source)
            return self.client.evalsha(self.sha, len(keys), *keys, *args)


def commit_script(client: Redis) -> LuaScript:
    return LuaScript(client, COMMIT_LUA)


def read_script(client: Redis) -> LuaScript:
    return LuaScript(client, READ_LUA)
