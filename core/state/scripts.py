"""The Lua scripts of canonical state, in ``core/state/lua/`` with their KEYS/ARGV contracts
written above them. Each runs through redis-py's ``Script``: by its SHA (EVALSHA), loaded
again when the server has forgotten it (a restart, SCRIPT FLUSH, a failover).

``bench/lua_calls.py`` measures ``Script`` against a bare EVALSHA: the same within noise."""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redis import Redis
    from redis.commands.core import Script

__all__ = ["COMMIT_LUA", "READ_LUA", "commit_script", "read_script"]

COMMIT_LUA = files("core.state").joinpath("lua", "commit.lua").read_text(encoding="utf-8")
READ_LUA = files("core.state").joinpath("lua", "read.lua").read_text(encoding="utf-8")


def commit_script(client: Redis) -> Script:
    return client.register_script(COMMIT_LUA)


def read_script(client: Redis) -> Script:
    return client.register_script(READ_LUA)
