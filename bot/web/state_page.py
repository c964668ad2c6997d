"""The State page: a workspace's live keys with value, version, who set it and when, when it
expires, and, for a key changed for a while, when it reverts and which mutation reverts it
(or, once it has, that it was reverted, when and by which mutation); below them, the keys a
timed revert deleted lately (they were not set before the change). A ``secret`` key's value
is masked (as it is to the model). Times are the Redis server's.

The keys come ``PAGE`` at a time from the key index, in key order (``?after=KEY`` starts after
KEY, ``?prefix=`` narrows them), and only those are read; each person may open
``WebSettings.state_per_minute`` State pages a minute (``bot.web.rate_limits``)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, render_template, request

from bot.app import App
from bot.web.context import web, workspace_app
from bot.web.rate_limits import too_often
from core.state.codec import UnreadableEntry
from core.state.keys import validate_state_key
from core.state.scripts import server_ms
from core.time_phrases import TimedChange

__all__ = ["PAGE", "REVERTS_READ", "blueprint"]

PAGE = 100  # keys on one page, read from the key index: the next page starts after the last
REVERTS_READ = 200  # the newest log records read for keys a timed revert deleted
blueprint = Blueprint("state_page", __name__)


@blueprint.get("/w/<workspace>/state")
def page(workspace: str) -> Any:
    app = workspace_app(workspace)
    prefix = request.args.get("prefix", "").strip()
    after = request.args.get("after", "").strip()
    if after:
        try:
            validate_state_key(after)
        except ValueError as exc:
            abort(400, description=f"after: {exc}")
    refused = too_often(app.redis, "state", workspace, web().settings.state_per_minute)
    if refused is not None:
        return refused
    skipped: list[UnreadableEntry] = []
    found = app.store.page(prefix, after, PAGE, skipped)
    now = server_ms(app.redis, app.store.keys.versions)
    timed = app.store.timed(found.entries)
    rows = [
        {
            "entry": e,
            "secret": app.policy.is_secret(e.key),
            "ttl": None if e.expires_at is None else max(0, round((e.expires_at - now) / 1e3)),
            "timed": timed.get(e.key),
        }
        for e in found.entries
    ]
    return render_template(
        "state.html",
        rows=rows,
        prefix=prefix,
        after=after,
        page=found,
        size=PAGE,
        skipped=skipped,
        now=now,
        deleted=[] if after else _deleted(app, prefix),
    )


def _deleted(app: App, prefix: str) -> list[dict[str, Any]]:
    """The keys a timed revert deleted among the newest log records, newest first, while
    they stay unset: each with the change it reverted."""
    found: dict[str, dict[str, Any]] = {}
    for record in reversed(app.log.latest(REVERTS_READ)):
        m = record.mutation
        undone = m.meta.get("reverts")
        if m.key in found or not m.key.startswith(prefix):
            continue
        found[m.key] = {}  # its newest record decides
        if m.op.value == "delete" and m.meta.get("timed") and isinstance(undone, str):
            change = TimedChange(undone, record.ts, m.id, "reverted")
            found[m.key] = {"key": m.key, "timed": change, "corr": m.correlation_id}
    rows = [row for row in found.values() if row]
    if not rows:
        return []
    live = app.redis.zmscore(app.store.keys.index, [row["key"] for row in rows])
    return [row for row, score in zip(rows, live, strict=True) if score is None]
