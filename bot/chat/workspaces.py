"""One workspace per tenant: the adapters ask ``Workspaces`` for the app and the runtime of
the tenant an event belongs to (``Tenancy`` decides which, from the payload's ids), and it
builds each once, on the shared Redis, config and model. It also keeps the directory of
workspaces: each one's tenant and last activity; ``every_workspace`` adds to it the tenants
the config lists and the workspaces that hold data (``bot.redis.keyspace``), for ``deliberate
workspaces`` and the operator's view of the web."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.redis.keyspace import census, holds_data, last_written
from core.config.tenants import Tenancy, Tenant
from core.recently_used import Recent
from core.redis.client import RedisClient
from core.state.codec import text
from core.state.keys import WORKSPACE_DIRECTORY

if TYPE_CHECKING:
    from bot.app import App
    from core.llm.chat import ChatModel
    from core.runtime.runner import Runtime

__all__ = [
    "Listing",
    "WorkspaceDirectory",
    "WorkspaceFound",
    "WorkspaceSeen",
    "Workspaces",
    "every_workspace",
]

TOUCH_EVERY_SEC = 30.0  # last activity is kept to this precision: one write per workspace
KEPT = 256  # workspaces whose app and runtime stay built; others are built again when needed


@dataclass(frozen=True)
class WorkspaceSeen:
    workspace: str
    platform: str
    tenant: str
    private: bool
    last_active_ms: int

    @property
    def described(self) -> str:
        if self.private:
            return f"{self.platform} direct messages of user {self.tenant.removeprefix('dm-')}"
        unit = {"discord": "server", "slack": "org" if self.tenant.startswith("E") else "team"}
        return f"{self.platform} {unit.get(self.platform, 'tenant')} {self.tenant}"


class WorkspaceDirectory:
    """Every workspace a platform event reached, in one Redis hash (a field per workspace)."""

    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis
        self._written: Recent[float] = Recent(KEPT * 4)

    def touch(self, tenant: Tenant, now_ms: int | None = None) -> None:
        """Record activity; at most one write per workspace every ``TOUCH_EVERY_SEC``."""
        last = self._written.get(tenant.workspace)
        if last is not None and time.monotonic() - last < TOUCH_EVERY_SEC:
            return
        self._written.put(tenant.workspace, time.monotonic())
        record = {
            "platform": tenant.platform,
            "tenant": tenant.id,
            "private": tenant.private,
            "lastActiveMs": now_ms if now_ms is not None else int(time.time() * 1000),
        }
        self.redis.hset(WORKSPACE_DIRECTORY, tenant.workspace, json.dumps(record))

    def seen(self) -> list[WorkspaceSeen]:
        """Most recently active first."""
        raw: dict[Any, Any] = self.redis.hgetall(WORKSPACE_DIRECTORY)
        found = []
        for name, record in raw.items():
            data = json.loads(record)
            found.append(
                WorkspaceSeen(
                    str(text(name)),
                    str(data["platform"]),
                    str(data["tenant"]),
                    bool(data.get("private")),
                    int(data["lastActiveMs"]),
                )
            )
        return sorted(found, key=lambda w: (-w.last_active_ms, w.workspace))


@dataclass(frozen=True)
class WorkspaceFound:
    """One workspace of ``every_workspace``: ``seen`` when a platform event reached it,
    ``configured`` when the config lists its tenant, ``holds_data`` when its keys hold state,
    decisions, proposals or traces (``core.state.keys.DATA_KEYS``; one only holding data was
    written with ``--workspace``, say); ``written_ms``: when its streams last took an entry
    (``bot.redis.keyspace.last_written``), 0 for never."""

    workspace: str
    seen: WorkspaceSeen | None
    configured: Tenant | None
    holds_data: bool
    written_ms: int = 0

    @property
    def kind(self) -> str:
        if self.configured is not None:
            return "configured"
        return "seen" if self.seen is not None else "data only"

    @property
    def described(self) -> str:
        if self.seen is not None:
            return self.seen.described
        if self.configured is not None:
            tenant = self.configured
            row = WorkspaceSeen(tenant.workspace, tenant.platform, tenant.id, tenant.private, 0)
            return row.described
        return "no tenant: holds data only"

    @property
    def last_active_ms(self) -> int:
        """The later of the last event a bot took there and the last write of its data (a
        console turn, a CLI or worker commit: no event of a platform's), 0 for never."""
        reached = self.seen.last_active_ms if self.seen is not None else 0
        return max(reached, self.written_ms)


@dataclass(frozen=True)
class Listing:
    """``complete``: False when the keyspace was too large to walk whole (a workspace that
    holds data may be missing; ``holds_data`` still answers for one by name)."""

    workspaces: list[WorkspaceFound]
    complete: bool

    @property
    def names(self) -> list[str]:
        return [found.workspace for found in self.workspaces]


def every_workspace(redis: RedisClient, tenancy: Tenancy, own: str | None = None) -> Listing:
    """Each workspace a platform event reached (most recently reached first), then each the
    config lists and none reached, then each only holding data (by name), each with its last
    activity; ``own``: the process's own workspace (``--workspace``), listed only when it
    holds data."""
    seen = {row.workspace: row for row in WorkspaceDirectory(redis).seen()}
    listed = {tenant.workspace: tenant for tenant in tenancy.configured()}
    found = census(redis)
    holding = set(found.workspaces)
    if own is not None and own not in holding and holds_data(redis, own):
        holding.add(own)  # beyond what the walk could read, or written since
    names = list(dict.fromkeys([*seen, *listed, *sorted(holding)]))

    def holds(name: str) -> bool:
        return name in holding or (not found.complete and holds_data(redis, name))

    rows = [
        WorkspaceFound(n, seen.get(n), listed.get(n), holds(n), last_written(redis, n))
        for n in names
    ]
    return Listing(rows, found.complete)


class Workspaces:
    """The apps and runtimes of every tenant, built on first use and kept. ``model``: the
    chat model every workspace shares (else, with ``use_env``, one from ``OPENAI_API_KEY``)."""

    def __init__(self, base: App, *, model: ChatModel | None = None, use_env: bool = True) -> None:
        if model is None and use_env:
            from core.llm.chat import chat_model_from_env  # loads openai: only when asked

            model = chat_model_from_env()
        self.base = base
        self.model = model
        self.tenancy = Tenancy(base.config.tenants, base.config.roles)
        self.directory = WorkspaceDirectory(base.redis)
        self._lock = threading.Lock()
        self._apps: Recent[App] = Recent()
        self._runtimes: Recent[Runtime] = Recent()

    def app(self, tenant: Tenant) -> App:
        with self._lock:
            app = self._apps.get(tenant.workspace)
            if app is None:
                built = self.base.for_workspace(tenant.workspace, rules=tenant.configured)
                app = self._apps.put(tenant.workspace, built)
        self.directory.touch(tenant)
        return app

    def runtime(self, tenant: Tenant) -> Runtime:
        app = self.app(tenant)
        with self._lock:
            runtime = self._runtimes.get(tenant.workspace)
            if runtime is None:
                runtime = self._runtimes.put(
                    tenant.workspace, app.runtime(self.model, use_env=False)
                )
        return runtime
