"""The Slack bot as Slack sees it: our HTTP server (waitress + the real Bolt app) on a free
port, its Web API calls going to a local Slack server, and requests signed the way Slack
signs them, with payloads of the shapes Slack documents.

    bot = SlackBot(app, slack_api).start()
    bot.event(mention("what if we used postgres"))
    reply = bot.slack.wait_until(lambda: bot.slack.messages)[0]
    bot.click(reply, "ConfirmCurrent", user="U0ALICE")
    bot.click(reply, "EditProposal", user="U0BOB")      # a button that asks: a modal opens
    bot.submit(bot.opened()[-1], "Ending", user="U0BOB")  # its view_submission
"""

from __future__ import annotations

import copy
import itertools
import json
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any
from urllib.parse import urlencode

import httpx
from slack_sdk.signature import SignatureVerifier

from bot.app import App
from bot.chat.workspaces import Workspaces
from bot.slack.adapter import SlackAdapter
from bot.slack.bolt import build_bolt_app
from bot.slack.serve import EVENTS_PATH
from bot.slack.settings import SlackSettings
from core.llm.chat import ChatModel
from tests.bot.slack.serving import Served
from tests.servers.slack_api import SlackServer

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
TEAM, CHANNEL = "T0TEST", "C0TEAM"
_ts = itertools.count(1)


def new_ts() -> str:
    return f"{1_700_000_000 + next(_ts)}.000100"


class Listeners(ThreadPoolExecutor):
    """Bolt's listener pool, remembering what it ran, so a test can wait for everything the
    bot does after answering Slack."""

    def __init__(self, workers: int = 8) -> None:
        super().__init__(max_workers=workers)
        self.futures: list[Future[Any]] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future = super().submit(fn, *args, **kwargs)
        self.futures.append(future)
        return future

    def idle(self, timeout: float = 15.0) -> None:
        _, pending = wait(list(self.futures), timeout)
        assert not pending, f"{len(pending)} listeners still running after {timeout}s"


class SlackBot:
    """``workers``: the threads of Bolt's listener pool (where turns and clicks run)."""

    def __init__(
        self, app: App, slack: SlackServer, model: ChatModel | None = None, *, workers: int = 8
    ) -> None:
        self.app, self.slack = app, slack
        settings = SlackSettings.from_env(slack.env() | {"SLACK_SIGNING_SECRET": SIGNING_SECRET})
        self.workspaces = Workspaces(app, model=model, use_env=False)
        self.adapter = SlackAdapter(self.workspaces, settings.web_client())
        self.listeners = Listeners(workers)
        self.bolt = build_bolt_app(self.adapter, settings, executor=self.listeners)
        self.adapter.serve_token_team()
        self.served = Served(self.bolt)
        self.server = self.served.server
        self.url = f"{self.served.base}{EVENTS_PATH}"
        # each request on a connection of its own, as Slack's arrive: CI once read a reset
        # (httpx.ReadError) on a pooled connection in the Edit/Apply race, not seen again in
        # 1,400 rounds here; a connection reused as the server drops it would read so
        self.http = httpx.Client(timeout=10, limits=httpx.Limits(max_keepalive_connections=0))

    def start(self) -> SlackBot:
        self.served.start()
        return self

    def stop(self) -> None:
        self.listeners.idle()
        self.served.stop()
        self.listeners.shutdown()
        self.http.close()

    # --- requests, signed as Slack signs them -----------------------------------------

    def post(
        self,
        body: str,
        content_type: str,
        *,
        secret: str = SIGNING_SECRET,
        timestamp: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        signature = SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body)
        sent = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": signature,
            **(headers or {}),
        }
        return self.http.post(self.url, content=body.encode(), headers=sent)

    def event(
        self,
        event: dict[str, Any],
        *,
        event_id: str | None = None,
        retry: int | None = None,
        team: str = TEAM,
        shared: bool = False,
        **signing: Any,
    ) -> httpx.Response:
        """An Events API ``event_callback`` (Slack retries carry X-Slack-Retry-Num) for the
        installation in ``team``; ``shared``: in a Slack Connect channel."""
        body = event_callback(event, event_id or f"Ev{next(_ts):08d}", team, shared)
        headers = (
            {}
            if retry is None
            else {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        )
        return self.post(json.dumps(body), "application/json", headers=headers, **signing)

    def click(
        self,
        message: dict[str, Any],
        action: str,
        *,
        user: str = "U0ALICE",
        trigger_id: str | None = None,
        value: str | None = None,
        channel: str = CHANNEL,
        as_action: str | None = None,
        ephemeral: bool = False,
        team: str = TEAM,
        user_team: str | None = None,
        enterprise: str | None = None,
        **signing: Any,
    ) -> httpx.Response:
        """A ``block_actions`` payload for the button of ``action`` in ``message`` (with
        ``as_action``, its data under another action's id: a button no beat showed), from
        ``team``'s installation, by a user of ``user_team`` (default: the same)."""
        payload = block_actions(message, action, user, trigger_id, value, channel)
        payload["team"] = {"id": team, "domain": "test"}
        payload["user"]["team_id"] = user_team or team
        if enterprise is not None:  # an Enterprise Grid org's team
            payload["enterprise"] = {"id": enterprise, "name": enterprise.lower()}
        payload["response_url"] = self.slack.response_url("actions")
        if as_action is not None:
            payload["actions"][0]["action_id"] = f"deliberate:{as_action}:9"
        if ephemeral:  # Slack sends no message for an ephemeral one, only where it was
            del payload["message"]
            payload["container"] = payload["container"] | {"is_ephemeral": True}
        body = urlencode({"payload": json.dumps(payload)})
        return self.post(body, "application/x-www-form-urlencoded", **signing)

    def submit(
        self,
        view: dict[str, Any],
        typed: str | None,
        *,
        user: str = "U0ALICE",
        team: str = TEAM,
        metadata: str | None = None,
    ) -> httpx.Response:
        """A ``view_submission`` of a modal the bot opened (``view``, as ``views.open`` stored
        it) with ``typed`` in its one input (None: left empty), by ``user`` of ``team``; with
        ``metadata``, its ``private_metadata`` replaced. The response is the bot's
        acknowledgement (empty: the modal closes)."""
        payload = view_submission(view, typed, user, team)
        if metadata is not None:
            payload["view"]["private_metadata"] = metadata
        body = urlencode({"payload": json.dumps(payload)})
        return self.post(body, "application/x-www-form-urlencoded")

    def opened(self, count: int = 1) -> list[dict[str, Any]]:
        """The modals the bot opened (each as ``views.open`` stored it), once ``count`` are."""
        views = self.slack.wait_until(
            lambda: self.slack.views if len(self.slack.views) >= count else None
        )
        return [copy.deepcopy(opened["view"]) for opened in views]

    def command(self, text: str, *, user: str = "U0ALICE", team: str = TEAM) -> dict[str, Any]:
        """A ``/deliberate`` slash command, as the form body Slack posts: acknowledged at
        once with nothing, then answered through its ``response_url``."""
        form = {
            "token": "verification-token-unused",
            "team_id": team,
            "team_domain": "test",
            "channel_id": CHANNEL,
            "channel_name": "team",
            "user_id": user,
            "user_name": user.lower(),
            "command": "/deliberate",
            "text": text,
            "api_app_id": "A0TEST",
            "is_enterprise_install": "false",
            "response_url": self.slack.response_url("commands"),
            "trigger_id": f"{next(_ts)}.1.cmd",
        }
        answered = len(self.slack.responses)
        acked = self.post(urlencode(form), "application/x-www-form-urlencoded")
        assert acked.status_code == 200 and acked.text == ""
        return self.slack.wait_until(
            lambda: self.slack.responses[answered] if len(self.slack.responses) > answered else None
        )

    # --- what the bot did --------------------------------------------------------------

    def replies(self, count: int = 1) -> list[dict[str, Any]]:
        """The bot's messages as posted (copies: an update changes the server's own)."""
        posted = self.slack.wait_until(
            lambda: self.slack.messages if len(self.slack.messages) >= count else None
        )
        return copy.deepcopy(posted)

    def ephemerals(self, count: int = 1) -> list[dict[str, Any]]:
        return self.slack.wait_until(
            lambda: self.slack.ephemerals if len(self.slack.ephemerals) >= count else None
        )


def event_callback(
    event: dict[str, Any],
    event_id: str,
    team: str | None = TEAM,
    shared: bool = False,
    *,
    enterprise: str | None = None,
    org_install: bool = False,
    bot_user: str = "U0TESTBOT",
) -> dict[str, Any]:
    """An Events API ``event_callback`` for the installation it reached: a team's, or an
    org's (then ``authorizations`` names no team; ``team_id`` is the workspace's);
    ``shared``: from a Slack Connect channel."""
    return {
        "token": "verification-token-unused",
        "team_id": team or event.get("team"),
        **({"enterprise_id": enterprise} if enterprise else {}),
        "api_app_id": "A0TEST",
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": int(time.time()),
        "authorizations": [
            {
                "enterprise_id": enterprise,
                "team_id": None if org_install else team,
                "user_id": bot_user,
                "is_bot": True,
                "is_enterprise_install": org_install,
            }
        ],
        "is_ext_shared_channel": shared,
        "event_context": f"4-{event_id}",
    }


def mention(text: str, **fields: Any) -> dict[str, Any]:
    """An ``app_mention`` event: a message that starts with the bot's mention."""
    event = message(f"<@U0TESTBOT> {text}", **fields)
    del event["channel_type"]  # app_mention events do not carry it
    return event | {"type": "app_mention"}


def message(
    text: str,
    *,
    user: str = "U0ALICE",
    ts: str | None = None,
    thread_ts: str | None = None,
    channel: str = CHANNEL,
    **extra: Any,
) -> dict[str, Any]:
    ts = ts or new_ts()
    event = {
        "type": "message",
        "channel": channel,
        "user": user,
        "text": text,
        "ts": ts,
        "event_ts": ts,
        "channel_type": "channel",
        "team": TEAM,
        **extra,
    }
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def button(message_: dict[str, Any], action: str) -> dict[str, Any]:
    """The button of ``action`` (``ApplyProposal:glass``: the "Break glass" beside Apply)."""
    name, _, asks = action.partition(":")
    for block in message_.get("blocks") or []:
        for element in block.get("elements") or []:
            parts = element.get("action_id", "").split(":")
            glass = parts[-1] == "glass"
            if element.get("type") == "button" and parts[1] == name and glass == (asks == "glass"):
                return dict(element)
    raise AssertionError(f"no {action} button in {message_.get('blocks')}")


def block_actions(
    message_: dict[str, Any],
    action: str,
    user: str,
    trigger_id: str | None,
    value: str | None,
    channel: str,
) -> dict[str, Any]:
    pressed = button(message_, action)
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM},
        "api_app_id": "A0TEST",
        "token": "verification-token-unused",
        "container": {
            "type": "message",
            "message_ts": message_["ts"],
            "channel_id": channel,
            "is_ephemeral": False,
            "thread_ts": message_.get("thread_ts"),
        },
        "trigger_id": trigger_id or f"{next(_ts)}.1.{user.lower()}",
        "team": {"id": TEAM, "domain": "test"},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel, "name": "team"},
        "message": {k: v for k, v in message_.items() if k != "channel"},
        "state": {"values": {}},
        "actions": [
            {
                "action_id": pressed["action_id"],
                "block_id": "b1",
                "text": pressed["text"],
                "value": pressed["value"] if value is None else value,
                "style": pressed.get("style", "default"),
                "type": "button",
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }


def view_submission(
    view: dict[str, Any], typed: str | None, user: str, team: str = TEAM
) -> dict[str, Any]:
    """A ``view_submission`` payload, in the shape Slack documents: the view as stored, its
    ``state.values`` keyed by the input's ``block_id`` and ``action_id`` (a box left empty
    has a null ``value``)."""
    values: dict[str, Any] = {}
    for block in view.get("blocks") or []:
        if block.get("type") == "input":
            element = block["element"]
            box = {"type": element["type"], "value": typed}
            values[block["block_id"]] = {element["action_id"]: box}
    return {
        "type": "view_submission",
        "team": {"id": team, "domain": "test"},
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": team},
        "api_app_id": "A0TEST",
        "token": "verification-token-unused",
        "trigger_id": f"{next(_ts)}.1.{user.lower()}",
        "view": view | {"state": {"values": values}},
        "response_urls": [],
        "is_enterprise_install": False,
        "enterprise": None,
    }
