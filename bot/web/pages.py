"""The log, trace and rules pages."""

from __future__ import annotations

from flask import Blueprint

__all__ = ["blueprint"]

blueprint = Blueprint("pages", __name__)


@blueprint.get("/w/<workspace>/log")
def log(workspace: str) -> str:
    return "log"


@blueprint.get("/w/<workspace>/rules")
def rules(workspace: str) -> str:
    return "rules"
