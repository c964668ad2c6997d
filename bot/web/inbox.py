"""The Inbox."""

from __future__ import annotations

from flask import Blueprint

__all__ = ["blueprint"]

blueprint = Blueprint("inbox", __name__)


@blueprint.get("/w/<workspace>/inbox")
def page(workspace: str) -> str:
    return "inbox"
