"""The default registry: every action, each with strict arguments."""

from __future__ import annotations

import subprocess
import sys

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


def test_the_registry_loads_without_discord_py() -> None:
    """Every command that checks a config's rules builds the registry: discord.py (and the
    aiohttp under it) is imported by the Discord step when it runs, not at every start."""
    probe = "import sys, connectors.registry; print('discord' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False"
