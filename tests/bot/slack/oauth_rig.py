"""A Bolt app installed through OAuth, as Slack and a browser see it: the real Bolt ``App``
with Deliberate's OAuth settings (installations and states in the real Redis), served by the
bot's own waitress server, its Web API calls going to a local Slack server, Slack's requests
signed as Slack signs them.

    slack.add_install_code("c0de", BotIdentity("T0SECOND", "Second"))
    rig.install("c0de")                         # the install link, then Slack's redirect
    rig.event(mention("hi"), team="T0SECOND")   # a signed event_callback from that team

Its one listener answers an ``app_mention`` in the thread with the team Bolt saw, through the
request's own client (the installation's token). Bolt's token revocation listeners are on."""

from __future__ import annotations

import itertools
import json
import logging
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
from redis import Redis
from slack_bolt import App, BoltContext, Say
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk.signature import SignatureVerifier

from bot.slack.oauth import INSTALL_PATH, REDIRECT_PATH, OAuthConfig, RedisInstallationStore
from bot.slack.oauth.keys import OAuthKeys
from bot.slack.oauth.states import MAX_OUTSTANDING
from bot.slack.serve import EVENTS_PATH
from tests.bot.slack.rig import Listeners, event_callback
from tests.bot.slack.serving import Served
from tests.servers.slack_api import SlackServer

__all__ = [
    "COOKIE",
    "SIGNING_SECRET",
    "OAuthRig",
    "forget",
    "mention",
    "new_client_id",
]

SIGNING_SECRET = "5ec7e75ec7e75ec7e75ec7e75ec7e7aa"
COOKIE = "slack-app-oauth-state"  # Bolt's state cookie
_serial = itertools.count(1)


Build = Callable[[OAuthConfig, OAuthSettings, Executor], App]


class OAuthRig:
    """``build``: the Bolt app to serve (default: one that says hello with the team Bolt
    saw); the bot's own, through its adapter, in the end-to-end tests."""

    def __init__(
        self,
        redis: Redis,
        slack: SlackServer,
        env: dict[str, str] | None = None,
        build: Build | None = None,
        *,
        max_install_states: int = MAX_OUTSTANDING,
    ) -> None:
        self.slack = slack
        config = OAuthConfig.from_env(slack.oauth_env() | (env or {}))
        assert config is not None
        self.config = config
        self.settings = config.settings(redis, max_install_states=max_install_states)
        store = self.settings.installation_store
        assert isinstance(store, RedisInstallationStore)
        self.store = store
        self.listeners = Listeners()
        self.bolt = (build or _hello)(config, self.settings, self.listeners)

        self.served = Served(self.bolt)
        self.base = self.served.base
        self.http = httpx.Client(base_url=self.base, timeout=10, follow_redirects=False)

    def start(self) -> OAuthRig:
        self.served.start()
        return self

    def stop(self) -> None:
        self.idle()
        self.served.stop()
        self.listeners.shutdown()
        self.http.close()

    def idle(self, timeout: float = 15.0) -> None:
        """Wait for every listener Bolt ran after answering."""
        self.listeners.idle(timeout)

    # --- the browser's side of an install --------------------------------------------

    def install_link(self, query: str = "") -> tuple[httpx.Response, str]:
        """GET the install link: Slack's authorize URL in ``Location`` and the state."""
        answer = self.http.get(INSTALL_PATH + (f"?{query}" if query else ""))
        assert answer.status_code == 302, answer.text
        [state] = parse_qs(urlsplit(answer.headers["location"]).query)["state"]
        return answer, state

    def redirect(self, code: str, state: str, *, cookie: str | None = None) -> httpx.Response:
        """Slack sending the browser back: ``code`` and ``state`` in the query, and the
        browser's state cookie (by default the state's own, as the install link set it)."""
        cookie = state if cookie is None else cookie
        headers = {"Cookie": f"{COOKIE}={cookie}"} if cookie else {}
        return self.http.get(REDIRECT_PATH, params={"code": code, "state": state}, headers=headers)

    def install(self, code: str) -> httpx.Response:
        _, state = self.install_link()
        answer = self.redirect(code, state)
        assert answer.status_code == 200, answer.text
        return answer

    # --- Slack's requests, signed ------------------------------------------------------

    def post(self, body: dict[str, Any]) -> httpx.Response:
        text = json.dumps(body)
        stamp = str(int(time.time()))
        signature = SignatureVerifier(SIGNING_SECRET).generate_signature(timestamp=stamp, body=text)
        assert signature is not None
        headers = {
            "Content-Type": "application/json",
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": signature,
        }
        return self.http.post(EVENTS_PATH, content=text.encode(), headers=headers)

    def event(
        self,
        event: dict[str, Any],
        *,
        team: str | None,
        enterprise: str | None = None,
        org_install: bool = False,
    ) -> httpx.Response:
        body = event_callback(
            event,
            f"Ev{next(_serial):08d}",
            team,
            enterprise=enterprise,
            org_install=org_install,
            bot_user="U0BOT",
        )
        return self.post(body)


def _hello(config: OAuthConfig, settings: OAuthSettings, listeners: Executor) -> App:
    bolt = App(
        client=config.web_client(),
        signing_secret=SIGNING_SECRET,
        oauth_settings=settings,
        listener_executor=listeners,
        logger=logging.getLogger("deliberate.slack.bolt"),
    )
    bolt.enable_token_revocation_listeners()

    @bolt.event("app_mention")
    def _mention(event: dict[str, Any], say: Say, context: BoltContext) -> None:
        say(text=f"hello {context.team_id or context.enterprise_id}", thread_ts=event["ts"])

    return bolt


def mention(
    text: str, *, team: str, user: str = "U0ALICE", channel: str = "C0TEAM"
) -> dict[str, Any]:
    ts = f"{1_700_000_000 + next(_serial)}.000100"
    return {
        "type": "app_mention",
        "user": user,
        "text": f"<@U0BOT> {text}",
        "ts": ts,
        "event_ts": ts,
        "channel": channel,
        "team": team,
    }


def new_client_id() -> str:
    """A client id of Slack's shape, fresh per test, so each test's keys are its own."""
    return f"{uuid.uuid4().int % 10**10:010d}.{uuid.uuid4().int % 10**10:010d}"


def forget(redis: Redis, client_id: str) -> None:
    """Delete every key of the app ``client_id`` (its installations and states)."""
    keys = list(redis.scan_iter(match=OAuthKeys(client_id).every_key, count=1000))
    if keys:
        redis.delete(*keys)
