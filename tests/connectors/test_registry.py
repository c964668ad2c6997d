"""The default registry: every action, each with strict arguments."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from connectors.registry import default_registry

NAMES = [
    "discord.sendMessage",
    "http.post",
    "log.write",
    "obs.setInputMute",
    "obs.setScene",
    "obs.startStream",
    "obs.stopStream",
    "slack.postMessage",
    "twitch.createClip",
    "twitch.sendAnnouncement",
    "twitch.sendChatMessage",
]


def test_every_action_is_registered() -> None:
    registry = default_registry()

    assert registry.names() == NAMES
    assert all(registry.get(name).description for name in NAMES)
    assert [n for n in NAMES if registry.get(n).reconcile] == [
        n for n in NAMES if n.startswith("obs.")
    ]


@pytest.mark.parametrize("name", NAMES)
def test_arguments_forbid_unknown_fields(name: str) -> None:
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        default_registry().get(name).args.model_validate({"surprise": 1})
