"""Slack hears back within its three seconds however busy the bot is: every request is
acknowledged by the thread that received it, before any work, never from the listener pool
where the turns run (where a click would wait behind them)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from bot.app import App
from tests.bot.slack.rig import CHANNEL, SlackBot, mention
from tests.servers.http import Response
from tests.servers.slack_api import BotIdentity, SlackServer


class HeldPosts(SlackServer):
    """Slack, holding each ``chat.postMessage`` once ``hold()`` is called, until
    ``release()``: a turn that posts holds its listener thread meanwhile."""

    def __init__(self) -> None:
        super().__init__(channels={CHANNEL})
        self.holding = False
        self.arrived = threading.Event()
        self.gate = threading.Event()

    def hold(self) -> None:
        self.holding = True

    def release(self) -> None:
        self.holding = False
        self.gate.set()

    def _post_message(self, fields: dict[str, Any], bot: BotIdentity) -> Response:
        if self.holding:
            self.arrived.set()
            self.gate.wait(30)
        return super()._post_message(fields, bot)


@pytest.fixture
def slack_api() -> Iterator[SlackServer]:
    with HeldPosts() as server:
        yield server


@pytest.fixture
def busy_bot(team_app: App, slack_api: HeldPosts) -> Iterator[SlackBot]:
    """The bot with a listener pool of one thread."""
    running = SlackBot(team_app, slack_api, workers=1).start()
    yield running
    slack_api.release()
    running.stop()


def test_a_click_is_acknowledged_while_every_listener_is_busy(
    busy_bot: SlackBot, slack_api: HeldPosts
) -> None:
    busy_bot.event(mention("what if we used postgres for the event store"))
    [reply] = busy_bot.replies()
    slack_api.hold()
    busy_bot.event(mention("and a weekly demo on fridays"))  # another thread
    assert slack_api.arrived.wait(15)  # its turn holds the only listener thread

    clicked = busy_bot.click(reply, "ConfirmCurrent")
    command = busy_bot.post(
        "command=%2Fdeliberate&text=state&user_id=U0ALICE&channel_id=C0TEAM&team_id=T0TEST",
        "application/x-www-form-urlencoded",
    )

    assert clicked.status_code == 200 and command.status_code == 200
    assert slack_api.updates == []  # the click itself waits its turn
    slack_api.release()
    [update] = slack_api.wait_until(lambda: slack_api.updates)
    assert update["ts"] == reply["ts"]
