"""The State page: a workspace's live keys with value, version, who set it and when, when it
expires, and, for a key changed for a while, when it reverts and which mutation reverts it
(or, once it has, that it was reverted, when and by which mutation); below them, the keys a
timed revert deleted lately (they were not set before the change). A ``secret`` key's value
is masked (as it is to the model). Times are the Redis server's."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, render_template, request

from bot.app import App
from bot.web.context import workspace_app
from core.moments import TimedChange
from core.state.codec import UnreadableEntry
from core.state.scripts import server_ms

__all__ = ["REVERTS_READ", "SHOWN", "blueprint"]

SHOWN = 1000  # keys on one page; a prefix narrows the rest
REVERTS_READ = 200  # the newest log records read for keys a timed revert deleted
blueprint = Blueprint("state_page", __name__)


@blueprint.get("/w/<workspace>/state")
def page(workspace: str) -> str:
    app = workspace_app(workspace)
    prefix = request.args.get("prefix", "").strip()
    skipped: list[UnreadableEntry] = []
    entries = app.store.entries(prefix, skipped)
    now = server_ms(app.redis, app.store.keys.versions)
    timed = app.store.timed(entries[:SHOWN])
    rows = [
        {
            "entry": e,
            "secret": app.policy.is_secret(e.key),
            "ttl": None if e.expires_at is None else max(0, round((e.expires_at - now) / 1e3)),
            "timed": timed.get(e.key),
        }
        for e in entries[:SHOWN]
    ]
    return render_template(
        "state.html",
        rows=rows,
        prefix=prefix,
        more=max(0, len(entries) - SHOWN),
        skipped=skipped,
        now=now,
        deleted=_deleted(app, prefix, {e.key for e in entries}),
    )


def _deleted(app: App, prefix: str, live: set[str]) -> list[dict[str, Any]]:
    """The keys a timed revert deleted among the newest log records, newest first, while
    they stay unset: each with the change it reverted."""
    found: dict[str, dict[str, Any]] = {}
    for record in reversed(app.log.latest(REVERTS_READ)):
        m = record.mutation
        undone = m.meta.get("reverts")
        if m.key in found or m.key in live or not m.key.startswith(prefix):
            continue
        found[m.key] = {}  # its newest record decides
        if m.op.value == "delete" and m.meta.get("timed") and isinstance(undone, str):
            change = TimedChange(undone, record.ts, m.id, "reverted")
            found[m.key] = {"key": m.key, "timed": change, "corr": m.correlation_id}
    return [row for row in found.values() if row]
