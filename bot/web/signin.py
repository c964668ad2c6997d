"""Sign-in and sign-out. (Sign in with Slack and with Discord are added next to the operator
token.)"""

from __future__ import annotations

import hmac
from typing import Any

from flask import Blueprint, flash, redirect, render_template, request, session, url_for

from bot.web.context import web
from bot.web.people import SignedIn

__all__ = ["blueprint", "start_session"]

blueprint = Blueprint("signin", __name__)


def start_session(person: SignedIn) -> Any:
    """Begin ``person``'s session (a new cookie: whatever session was there ends) and go
    where the sign-in started."""
    web().sessions.end(session.get("sid"))
    after = session.get("next") or url_for("index")
    session.clear()
    session["sid"] = web().sessions.start(person)
    return redirect(after)


@blueprint.get("/signin")
def page() -> Any:
    after = request.args.get("next", "")
    session["next"] = after if after.startswith("/") and not after.startswith("//") else None
    return render_template("signin.html", operator=web().settings.operator_token is not None)


@blueprint.post("/signin/token")
def token() -> Any:
    expected = web().settings.operator_token
    given = request.form.get("token", "")
    if not expected or not hmac.compare_digest(given.encode(), expected.encode()):
        flash("That is not the operator token.", "error")
        return redirect(url_for("signin.page")), 303
    return start_session(SignedIn.operator())


@blueprint.post("/signout")
def signout() -> Any:
    web().sessions.end(session.get("sid"))
    session.clear()
    return redirect(url_for("signin.page")), 303
