"""What every page reaches through the request: the program (``Web``: the base app, the
settings, the sessions, which tenants exist), the person signed in, and a workspace's app,
given only to someone who may see it (anyone else gets 404: a workspace's name is not
confirmed to strangers). A person of Slack or Discord sees the workspaces they signed in to;
the operator sees every workspace (``bot.chat.workspaces.every_workspace``: each configured, each
a platform event reached, each that holds data)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from flask import abort, current_app, g

from bot.app import App
from bot.chat.workspaces import Listing, every_workspace
from bot.redis.keyspace import holds_data
from bot.web.people import Sessions, SignedIn
from bot.web.settings import WebSettings
from bot.web.trace_limits import TraceCache
from core.config.tenants import Tenancy
from core.recently_used import Recent
from core.state.actor import Actor
from core.state.keys import validate_workspace

__all__ = ["LISTING_FOR_SEC", "Web", "acting_as", "may_read", "person", "web", "workspace_app"]

LISTING_FOR_SEC = 30.0  # the operator's listing walks the keyspace: read again this often


@dataclass
class Web:
    base: App
    settings: WebSettings
    sessions: Sessions
    tenancy: Tenancy
    env: dict[str, str]  # the sign-in providers' settings are read here
    _apps: Recent[App] = field(default_factory=Recent)
    traces: TraceCache = field(default_factory=TraceCache)  # what the Trace page found lately
    _listed: tuple[float, Listing] | None = None
    _listing_lock: threading.Lock = field(default_factory=threading.Lock)

    def app_for(self, workspace: str) -> App:
        """The workspace's app (no rule consumer is made: the web only reads rules' work)."""
        app = self._apps.get(workspace)
        if app is None:
            app = self._apps.put(workspace, self.base.for_workspace(workspace, rules=False))
        return app

    def listing(self) -> Listing:
        """``every_workspace``, read again when it is older than ``LISTING_FOR_SEC``."""
        with self._listing_lock:
            if self._listed is None or time.monotonic() - self._listed[0] > LISTING_FOR_SEC:
                found = every_workspace(
                    self.base.redis, self.tenancy, own=self.base.store.workspace
                )
                self._listed = (time.monotonic(), found)
            return self._listed[1]

    def workspaces(self) -> list[str]:
        """Every workspace there is: the web process's own, each configured tenant's, each
        one a platform event reached, and each that holds data."""
        return list(dict.fromkeys([self.base.store.workspace, *self.listing().names]))


def web() -> Web:
    found: Web = current_app.extensions["deliberate"]
    return found


def person() -> SignedIn:
    """The person of this request (the guard let it through only with one)."""
    signed: SignedIn = g.person
    return signed


def visible(who: SignedIn) -> list[str]:
    if who.read_only:
        return web().workspaces()
    return list(who.access)


def may_read(who: SignedIn, workspace: str) -> bool:
    """A person reads the workspaces they signed in to; the operator reads every one listed,
    and any other that holds data now (written since the listing was read, or beyond what it
    could walk)."""
    if not who.read_only:
        return workspace in who.access
    if workspace in web().workspaces():
        return True
    try:
        validate_workspace(workspace)
    except ValueError:
        return False
    return holds_data(web().base.redis, workspace)


def workspace_app(workspace: str) -> App:
    """``workspace``'s app, when the person may see it; else 404."""
    if not may_read(person(), workspace):
        abort(404, description=f"no workspace {workspace!r} of yours")
    return web().app_for(workspace)


def acting_as(workspace: str) -> Actor:
    """The actor the person is in ``workspace``; the operator token acts nowhere (403)."""
    workspace_app(workspace)
    actor = person().actor_in(workspace)
    if actor is None:
        abort(403, description="the operator token reads; it cannot act")
    return actor
