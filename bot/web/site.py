"""The web application: ``create_app`` wires the pages, the sign-in, the inbox and the
metrics onto one Flask app, and guards them. Every page but the sign-in's, ``/health`` and
``/metrics`` (which has its own check) wants a session, or the operator token as a Bearer
header; without one a page redirects to the sign-in (an action is refused with 401, and
changes nothing). Every POST carries a CSRF token (Flask-WTF). Cookies are HttpOnly,
SameSite=Lax, and Secure when the site is served over https."""

from __future__ import annotations

import hmac
import os
import secrets
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from flask import Flask, Response, g, redirect, render_template, request, session, url_for
from flask_wtf.csrf import CSRFError, CSRFProtect
from werkzeug.exceptions import HTTPException

from bot.app import App
from bot.chat.workspaces import WorkspaceFound
from bot.web import formats, inbox, metrics, pages, signin, state_page
from bot.web.context import Web, person, visible, web
from bot.web.metrics import plain
from bot.web.people import Sessions, SignedIn
from bot.web.rate_limits import refused_tries, wrong_tokens
from bot.web.settings import WebSettings
from core.config.tenants import Tenancy
from core.redis.client import RedisClient

__all__ = ["create_app"]

PUBLIC = frozenset({"static", "favicon", "health", "metrics.metrics"})  # no session read
# the query each page reads; any other key is a 400 (None: the provider's to say)
QUERY: dict[str, frozenset[str] | None] = {
    "pages.log": frozenset({"key", "actor", "since", "until", "before", "after"}),
    "pages.trace": frozenset({"scan"}),
    "pages.rules": frozenset({"per_rule"}),
    "state_page.page": frozenset({"prefix", "after"}),
    "signin.page": frozenset({"next"}),
    "signin.slack_back": None,
    "signin.discord_back": None,
}
SECRET_KEY = "{deliberate}:web:secret"
SWITCHER = 30  # workspaces the header's switcher names


def create_app(base: App, settings: WebSettings, *, env: Mapping[str, str] | None = None) -> Flask:
    """``env``: where the sign-in providers' settings are read (default ``os.environ``)."""
    app = Flask(__name__)
    app.config.update(
        SECRET_KEY=settings.secret or _shared_secret(base.redis),
        SESSION_COOKIE_NAME="deliberate",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=settings.secure_cookies,
        PERMANENT_SESSION_LIFETIME=timedelta(seconds=settings.session_ttl_sec),
        MAX_CONTENT_LENGTH=64 * 1024,  # a form here is a reason or an edited value
        WTF_CSRF_TIME_LIMIT=settings.session_ttl_sec,
        WTF_CSRF_SSL_STRICT=settings.secure_cookies,
    )
    tenancy = Tenancy(base.config.tenants, base.config.roles)
    environment = dict(os.environ if env is None else env)
    app.extensions["deliberate"] = Web(
        base, settings, Sessions(base.redis, settings.session_ttl_sec), tenancy, environment
    )
    signin.install(app, environment)
    app.before_request(_guard)  # first: no session is 401, before a missing CSRF token's 400
    CSRFProtect(app)
    for module in (signin, metrics, inbox, pages, state_page):
        app.register_blueprint(module.blueprint)
    app.after_request(_headers)
    app.register_error_handler(CSRFError, _csrf_refused)
    app.register_error_handler(HTTPException, _http_error)
    app.add_url_rule("/", "index", _index)
    app.add_url_rule("/workspaces", "workspaces", _workspaces)
    app.add_url_rule("/health", "health", metrics.health)
    app.add_url_rule("/favicon.ico", "favicon", _favicon)  # asked for by every browser
    app.context_processor(_everywhere)
    formats.install(app)
    return app


def _shared_secret(redis: RedisClient) -> str:
    """One signing key for every web process, made by the first and kept."""
    redis.set(SECRET_KEY, secrets.token_urlsafe(48), nx=True)
    raw = redis.get(SECRET_KEY)
    assert raw is not None
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def _guard() -> Any:
    if request.endpoint in PUBLIC:  # a router's health check reads no session
        return None
    refused = _bad_request()
    if refused is not None:
        return refused
    found = web().sessions.get(session.get("sid"))
    if request.blueprint == signin.blueprint.name:  # open, and says who is signed in
        g.person = found
        return None
    if found is None:
        by_header = _operator_by_header()
        if isinstance(by_header, Response):
            return by_header
        found = by_header
    if found is None:
        if request.method in ("GET", "HEAD"):
            return redirect(url_for("signin.page", next=request.full_path.rstrip("?")))
        return plain("sign in first: nothing was changed\n", 401)
    g.person = found
    return None


def _bad_request() -> Response | None:
    """A query key the page does not read, or an Authorization header that is not ASCII:
    400, before anything is read."""
    if not request.headers.get("Authorization", "").isascii():
        return plain("the Authorization header must be ASCII (Bearer TOKEN)\n", 400)
    if request.endpoint is None:
        return None  # (a 404 follows)
    wanted = QUERY.get(request.endpoint, frozenset())
    unknown = sorted(set(request.args) - wanted) if wanted is not None else []
    if unknown:
        known = ", ".join(sorted(wanted or ())) or "none"
        return plain(f"this page reads no {', '.join(unknown)} (it reads: {known})\n", 400)
    return None


def _operator_by_header() -> SignedIn | Response | None:
    """The operator, when the request carries its token as a Bearer header; the 429 when
    too many wrong ones were tried (``bot.web.rate_limits.wrong_tokens``)."""
    token = web().settings.operator_token
    given = request.headers.get("Authorization", "")
    if not token or not given.startswith("Bearer "):
        return None
    right = hmac.compare_digest(given[7:], token)
    wait = wrong_tokens(token, right)
    if wait is not None:
        return refused_tries(wait)
    return SignedIn.operator() if right else None


def _headers(response: Response) -> Response:
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    response.headers.setdefault(
        "Content-Security-Policy",
        "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'",
    )
    if g.get("person") is not None:
        response.headers.setdefault("Cache-Control", "no-store")
    return response


def _csrf_refused(error: CSRFError) -> tuple[str, int]:
    return render_template(
        "error.html",
        status=400,
        message=f"{error.description} Nothing was changed; reload the page and try again.",
    ), 400


def _http_error(error: HTTPException) -> tuple[str, int]:
    status = error.code or 500
    return render_template("error.html", status=status, message=error.description), status


def _index() -> Any:
    names = visible(person())
    if len(names) == 1:
        return redirect(url_for("inbox.page", workspace=names[0]))
    return _workspaces()


def _workspaces() -> str:
    """The workspaces the person may open; to the operator, with what each one is."""
    who = person()
    found: dict[str, WorkspaceFound] = {}
    complete = True
    if who.read_only:
        listing = web().listing()
        found = {row.workspace: row for row in listing.workspaces}
        complete = listing.complete
    rows = [(name, found.get(name)) for name in visible(who)]
    return render_template("index.html", rows=rows, operator=who.read_only, complete=complete)


def _favicon() -> Response:
    return redirect(url_for("static", filename="favicon.svg"), 301)  # type: ignore[return-value]


def _everywhere() -> dict[str, Any]:
    """What the header shows: who is signed in, the workspace of the page, and the others
    the person may switch to (the first ``SWITCHER`` of them; the listing has them all)."""
    who: SignedIn | None = g.get("person")
    names = visible(who) if who is not None else []
    return {
        "who": who,
        "workspace": (request.view_args or {}).get("workspace"),
        "switch_to": names[:SWITCHER],
        "switch_more": len(names) > SWITCHER,
    }
