"""The shipped Slack app manifest asks for what the adapter listens to and calls, and
sends every request to the one path the server takes them on."""

from __future__ import annotations

from importlib.resources import files
from typing import Any

import yaml

from bot.slack.bolt import COMMAND, EVENTS
from bot.slack.serve import EVENTS_PATH

MANIFEST: dict[str, Any] = yaml.safe_load(
    files("bot.slack").joinpath("manifest.yaml").read_text(encoding="utf-8")
)

# which scope each Web API method and event needs, as Slack's reference gives them
SCOPES = {
    "app_mention": "app_mentions:read",
    "message.channels": "channels:history",
    "message.groups": "groups:history",
    "message.im": "im:history",
    "message.mpim": "mpim:history",
    "chat.postMessage": "chat:write",
    "chat.postEphemeral": "chat:write",
    "chat.update": "chat:write",
    "usergroups.list": "usergroups:read",
    "users.info": "users:read",  # the worker's direct messages (bot.slack.direct)
    "conversations.open": "im:write",
    COMMAND: "commands",
}


def test_it_subscribes_to_every_event_the_adapter_takes() -> None:
    subscribed = set(MANIFEST["settings"]["event_subscriptions"]["bot_events"])
    for event in EVENTS:
        assert any(s == event or s.startswith(f"{event}.") for s in subscribed), event
    assert subscribed <= set(SCOPES)


def test_it_grants_the_scope_of_everything_the_adapter_uses() -> None:
    granted = set(MANIFEST["oauth_config"]["scopes"]["bot"])
    assert set(SCOPES.values()) == granted


def test_commands_and_clicks_reach_the_events_path() -> None:
    [command] = MANIFEST["features"]["slash_commands"]
    assert command["command"] == COMMAND
    urls = [
        command["url"],
        MANIFEST["settings"]["event_subscriptions"]["request_url"],
        MANIFEST["settings"]["interactivity"]["request_url"],
    ]
    assert all(url.endswith(EVENTS_PATH) for url in urls)
    assert MANIFEST["settings"]["interactivity"]["is_enabled"] is True
