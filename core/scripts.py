"""Lua scripts shipped with the core, registered once per Redis client (EVALSHA, with the
client falling back to EVAL and re-caching when the server answers NOSCRIPT)."""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redis import Redis
    from redis.commands.core import Script

__all__ = ["COMMIT_LUA", "READ_LUA", "commit_script", "read_script"]

COMMIT_LUA = files("core").joinpath("commit.lua").read_text(encoding="utf-8")
READ_LUA = files("core").joinpath("read.lua").read_text(encoding="utf-8")


def commit_script(client: Redis) -> Script:
    return client.register_script(COMMIT_LUA)


def read_script(client: Redis) -> Script:
    return client.register_script(READ_LUA)
