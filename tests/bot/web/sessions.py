"""A browser's worth of HTTP for the web tests: an httpx client holding the cookie of a real
session (made the way a sign-in makes one: a record in Redis, its token in Flask's signed
cookie), and the CSRF token a page's form carries."""

from __future__ import annotations

import re

import httpx

from bot.web.people import SignedIn
from core.state.actor import Actor
from tests.bot.web.conftest import Site

__all__ = ["csrf_of", "person_in", "signed_in"]

_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def person_in(workspace: str, actor: Actor, name: str = "someone") -> SignedIn:
    return SignedIn(actor.platform, actor.id, name, {workspace: actor})


def signed_in(site: Site, who: SignedIn) -> httpx.Client:
    """A client whose cookie is ``who``'s new session on ``site``."""
    web = site.flask.extensions["deliberate"]
    token = web.sessions.start(who)
    serializer = site.flask.session_interface.get_signing_serializer(site.flask)  # type: ignore[attr-defined]
    client = httpx.Client(base_url=site.base)
    client.cookies.set("deliberate", serializer.dumps({"sid": token}), domain="127.0.0.1")
    return client


def csrf_of(client: httpx.Client, path: str) -> str:
    """The CSRF token of the form on ``path`` (a GET of it)."""
    page = client.get(path)
    assert page.status_code == 200, (path, page.status_code, page.text[:300])
    found = _CSRF.search(page.text)
    assert found is not None, f"no form with a CSRF token on {path}"
    return found.group(1)
