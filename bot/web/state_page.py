"""The State page: a workspace's live keys with value, version, who set it and when, and when
it expires; a ``secret`` key's value is masked (as it is to the model)."""

from __future__ import annotations

import time

from flask import Blueprint, render_template, request

from bot.web.context import workspace_app
from core.state.codec import UnreadableEntry

__all__ = ["SHOWN", "blueprint"]

SHOWN = 1000  # keys on one page; a prefix narrows the rest
blueprint = Blueprint("state_page", __name__)


@blueprint.get("/w/<workspace>/state")
def page(workspace: str) -> str:
    app = workspace_app(workspace)
    prefix = request.args.get("prefix", "").strip()
    skipped: list[UnreadableEntry] = []
    entries = app.store.entries(prefix, skipped)
    now = time.time()
    rows = [
        {
            "entry": e,
            "secret": app.policy.is_secret(e.key),
            "ttl": None if e.expires_at is None else max(0, round(e.expires_at / 1e3 - now)),
        }
        for e in entries[:SHOWN]
    ]
    return render_template(
        "state.html",
        rows=rows,
        prefix=prefix,
        more=max(0, len(entries) - SHOWN),
        skipped=skipped,
    )
