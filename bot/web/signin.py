"""Sign-in and sign-out. People sign in with the platform they already use, and are there
who they are in chat, in each workspace they belong to:

- **Sign in with Slack** (OpenID Connect; ``SLACK_CLIENT_ID``, ``SLACK_CLIENT_SECRET``, the
  app's own; ``DELIBERATE_SLACK_OIDC_URL``, default ``https://slack.com``): the ID token is
  checked against the provider's keys, issuer, audience, expiry and nonce (Authlib); its
  ``https://slack.com/team_id`` (and ``enterprise_id``) names the tenant, and the roles are
  read as the Slack adapter reads them (``bot.slack.roles.SlackPeople``: member ids, and
  user groups through ``SLACK_BOT_TOKEN`` when the config binds any).
- **Discord** (OAuth2; ``DISCORD_CLIENT_ID``, ``DISCORD_CLIENT_SECRET``): see
  ``bot.web.discord_people``.
- The **operator token** (``DELIBERATE_OPERATOR_TOKEN``), pasted here: reads, never acts.

A person of a team or server the bot does not serve gets no session. Whatever goes wrong with
a provider (refused, a forged state, a bad token) is a page that says so, and no session."""

from __future__ import annotations

import hmac
import logging
import re
from typing import Any

from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.flask_client import OAuth
from flask import (
    Blueprint,
    Flask,
    current_app,
    flash,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from joserfc.errors import JoseError
from requests import RequestException
from slack_sdk import WebClient

from bot.slack.roles import SlackPeople
from bot.web import discord_people
from bot.web.context import web
from bot.web.people import SignedIn
from bot.web.rate_limits import wrong_tokens
from bot.web.settings import MIN_TOKEN_CHARS

__all__ = ["blueprint", "install", "start_session"]

log = logging.getLogger("deliberate.web")
blueprint = Blueprint("signin", __name__)
SLACK_ISSUER = "https://slack.com"
# a path of this site: a browser drops tabs and newlines, and reads \ as /, so "/\t/x" or
# "/\x" would lead to another host; only plain path characters are taken
_SAME_SITE = re.compile(r"^/(?![/\\])[A-Za-z0-9_.~!$&'()*+,;=:@%/?-]*\Z")
FAILURES = (OAuthError, JoseError, RequestException, ValueError, KeyError)


def install(app: Flask, env: dict[str, str]) -> None:
    """Register the providers whose client id and secret are set."""
    oauth = OAuth(app)
    if env.get("SLACK_CLIENT_ID") and env.get("SLACK_CLIENT_SECRET"):
        base = (env.get("DELIBERATE_SLACK_OIDC_URL") or SLACK_ISSUER).rstrip("/")
        oauth.register(
            "slack",
            client_id=env["SLACK_CLIENT_ID"],
            client_secret=env["SLACK_CLIENT_SECRET"],
            server_metadata_url=f"{base}/.well-known/openid-configuration",
            client_kwargs={"scope": "openid profile", "timeout": 10},
        )
    discord_people.register(oauth, env)
    app.extensions["deliberate.oauth"] = oauth


def _client(name: str) -> Any:
    oauth: OAuth = current_app.extensions["deliberate.oauth"]
    return oauth.create_client(name)


def start_session(person: SignedIn) -> Any:
    """Begin ``person``'s session (a new cookie: whatever session was there ends) and go
    where the sign-in started."""
    web().sessions.end(session.get("sid"))
    after = session.get("next") or url_for("index")
    session.clear()
    session["sid"] = web().sessions.start(person)
    return redirect(after)


def _back_here(endpoint: str) -> str:
    public = web().settings.public_url
    if public:
        return public + url_for(endpoint)
    return url_for(endpoint, _external=True)


def _refused(why: str, status: int = 400) -> tuple[str, int]:
    """A sign-in that did not happen. Whoever was signed in stays so: no GET ends or alters
    a session (signing out is a POST)."""
    return render_template("error.html", status=status, message=why), status


@blueprint.get("/signin")
def page() -> Any:
    after = request.args.get("next", "")
    if "sid" not in session:  # a GET never alters a signed-in person's session
        session["next"] = after if _SAME_SITE.match(after) else None
    return render_template(
        "signin.html",
        operator=web().settings.operator_token is not None,
        slack=_client("slack") is not None,
        discord=_client("discord") is not None,
        slack_back=_back_here("signin.slack_back"),
        discord_back=_back_here("signin.discord_back"),
        token_chars=MIN_TOKEN_CHARS,
    )


@blueprint.get("/signin/slack")
def slack() -> Any:
    client = _client("slack")
    if client is None:
        return _refused(
            "Sign in with Slack is off: set SLACK_CLIENT_ID and SLACK_CLIENT_SECRET.", 404
        )
    try:
        return client.authorize_redirect(_back_here("signin.slack_back"))
    except FAILURES as exc:
        log.info("web: Slack's sign-in could not be reached: %s", _said(exc))
        return _refused("Slack cannot be reached for sign-in; try again shortly.", 502)


@blueprint.get("/signin/slack/callback")
def slack_back() -> Any:
    client = _client("slack")
    if client is None:
        return _refused("Sign in with Slack is off.", 404)
    try:
        token = client.authorize_access_token()
        claims = token.get("userinfo") or {}
        user_id = str(claims.get("https://slack.com/user_id") or claims["sub"])
        team_id = str(claims["https://slack.com/team_id"])
    except FAILURES as exc:
        log.info("web: a Slack sign-in failed: %s", _said(exc))
        return _refused("Slack sign-in did not succeed; nobody new is signed in.")
    enterprise = claims.get("https://slack.com/enterprise_id") or None
    tenant = web().tenancy.slack_team(team_id, enterprise)
    if tenant is None:
        return _refused(
            f"This Deliberate serves no workspace of Slack team {team_id}; "
            "nobody new is signed in.",
            403,
        )
    people = SlackPeople(tenant.bindings, _slack_api(web().env))
    actor = people.actor(user_id, talk_only=tenant.talk_only)
    name = str(claims.get("name") or user_id)
    return start_session(SignedIn("slack", user_id, name, {tenant.workspace: actor}))


@blueprint.get("/signin/discord")
def discord() -> Any:
    client = _client("discord")
    if client is None:
        return _refused(
            "Sign in with Discord is off: set DISCORD_CLIENT_ID and DISCORD_CLIENT_SECRET.", 404
        )
    return client.authorize_redirect(_back_here("signin.discord_back"))


@blueprint.get("/signin/discord/callback")
def discord_back() -> Any:
    client = _client("discord")
    if client is None:
        return _refused("Sign in with Discord is off.", 404)
    try:
        token = client.authorize_access_token()
        person = discord_people.signed_in(client, token, web().tenancy, web().env)
    except FAILURES as exc:
        log.info("web: a Discord sign-in failed: %s", _said(exc))
        return _refused("Discord sign-in did not succeed; nobody new is signed in.")
    if not person.access:
        return _refused(
            "This Deliberate serves none of your Discord servers; nobody new is signed in.", 403
        )
    return start_session(person)


def _said(exc: Exception) -> str:
    """For the server's log only (a provider's words, or a forged callback's, are never
    shown as the site's own): cut short, on one line."""
    text = exc.error or "refused" if isinstance(exc, OAuthError) else str(exc)
    return repr((text or type(exc).__name__)[:120])


def _slack_api(env: dict[str, str]) -> WebClient:
    """The Web API as the Slack adapter uses it (its token reads user groups)."""
    base = env.get("SLACK_API_URL") or WebClient.BASE_URL
    return WebClient(token=env.get("SLACK_BOT_TOKEN") or None, base_url=base.rstrip("/") + "/")


@blueprint.post("/signin/token")
def token() -> Any:
    """The operator token, pasted. Wrong tries are counted per address and per token
    (``bot.web.rate_limits``): past either limit, every try is refused (429) until the window
    passes, the right token's too."""
    expected = web().settings.operator_token
    given = request.form.get("token", "")
    right = expected is not None and hmac.compare_digest(given.encode(), expected.encode())
    wait = None if expected is None else wrong_tokens(expected, right)
    if wait is not None:
        message = (
            f"Too many wrong tokens were tried: every try is refused for {wait} s more, the "
            "right token too. Nobody new is signed in."
        )
        return (
            render_template("error.html", status=429, message=message),
            429,
            {"Retry-After": str(wait)},
        )
    if not right:
        flash("That is not the operator token.", "error")
        return redirect(url_for("signin.page")), 303
    return start_session(SignedIn.operator())


@blueprint.post("/signout")
def signout() -> Any:
    web().sessions.end(session.get("sid"))
    session.clear()
    return redirect(url_for("signin.page")), 303
