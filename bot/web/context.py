"""What every page reaches through the request: the program (``Web``: the base app, the
settings, the sessions, which tenants exist), the person signed in, and a workspace's app,
given only to someone who may see it (anyone else gets 404: a workspace's name is not
confirmed to strangers)."""

from __future__ import annotations

from dataclasses import dataclass, field

from flask import abort, current_app, g

from bot.app import App
from bot.web.people import Sessions, SignedIn
from bot.web.settings import WebSettings
from bot.web.trace_limits import TraceCache
from bot.workspaces import Recent, WorkspaceDirectory
from core.config.tenants import Tenancy
from core.state.actor import Actor

__all__ = ["Web", "acting_as", "person", "web", "workspace_app"]


@dataclass
class Web:
    base: App
    settings: WebSettings
    sessions: Sessions
    tenancy: Tenancy
    env: dict[str, str]  # the sign-in providers' settings are read here
    _apps: Recent[App] = field(default_factory=Recent)
    traces: TraceCache = field(default_factory=TraceCache)  # what the Trace page found lately

    @property
    def directory(self) -> WorkspaceDirectory:
        return WorkspaceDirectory(self.base.redis)

    def app_for(self, workspace: str) -> App:
        """The workspace's app (no rule consumer is made: the web only reads rules' work)."""
        app = self._apps.get(workspace)
        if app is None:
            app = self._apps.put(workspace, self.base.for_workspace(workspace, rules=False))
        return app

    def workspaces(self) -> list[str]:
        """Every workspace there is: the CLI's own, each configured tenant's, and each one a
        platform event reached."""
        names = [self.base.store.workspace]
        names += [t.workspace for t in self.tenancy.configured()]
        names += [seen.workspace for seen in self.directory.seen()]
        return list(dict.fromkeys(names))


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


def workspace_app(workspace: str) -> App:
    """``workspace``'s app, when the person may see it; else 404."""
    if workspace not in visible(person()):
        abort(404, description=f"no workspace {workspace!r} of yours")
    return web().app_for(workspace)


def acting_as(workspace: str) -> Actor:
    """The actor the person is in ``workspace``; the operator token acts nowhere (403)."""
    workspace_app(workspace)
    actor = person().actor_in(workspace)
    if actor is None:
        abort(403, description="the operator token reads; it cannot act")
    return actor
