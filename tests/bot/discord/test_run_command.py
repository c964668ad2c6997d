"""``deliberate run discord`` as a real process: it refuses to start without what it needs,
naming it; it logs in, registers ``/deliberate`` and goes for the gateway; SIGTERM stops it
cleanly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest

from tests.bot.discord.payloads import GUILD
from tests.servers.discord_api import DiscordServer
from tests.servers.refusing import refusing_port

DISCORD_VARS = ("DISCORD_TOKEN", "DISCORD_API_URL", "DISCORD_CHANNELS", "DISCORD_LISTEN")


def command(workspace: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "bot.main", "--workspace", workspace, "run", "discord", *args]


def environment(**extra: str) -> dict[str, str]:
    unset = (*DISCORD_VARS, "DISCORD_GUILD_ID", "DISCORD_SHARD", "DISCORD_GATEWAY_URL")
    unset += ("OPENAI_API_KEY",)
    return {k: v for k, v in os.environ.items() if k not in unset} | extra


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ({}, "DISCORD_TOKEN is not set"),
        ({"DISCORD_TOKEN": "t", "DISCORD_LISTEN": "sometimes"}, "DISCORD_LISTEN"),
        ({"DISCORD_TOKEN": "t", "DISCORD_GUILD_ID": "my-server"}, "DISCORD_GUILD_ID"),
    ],
)
def test_it_names_what_is_missing(workspace: str, extra: dict[str, str], problem: str) -> None:
    done = subprocess.run(
        command(workspace), env=environment(**extra), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and problem in done.stderr


def test_a_refused_token_stops_it_with_a_clear_error(workspace: str) -> None:
    with DiscordServer(token="the-right-one") as discord:
        env = environment(**discord.env()) | {"DISCORD_TOKEN": "a-wrong-one"}
        done = subprocess.run(
            command(workspace), env=env, capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 2 and "Discord refused DISCORD_TOKEN" in done.stderr
    assert "a-wrong-one" not in done.stderr


@pytest.mark.parametrize("shards", [[], ["--shard", "1/2"], ["--shard", "0,1/2"]])
def test_an_unreachable_gateway_is_named(workspace: str, shards: list[str]) -> None:
    """One connection, one shard, or several in one process (discord.py would retry those
    every 5 s for ever): the process stops, naming the gateway, without a traceback."""
    with DiscordServer() as discord, refusing_port() as port:  # nothing listens there
        unreachable = f"ws://127.0.0.1:{port}/"
        env = environment(**discord.env(), DISCORD_GATEWAY_URL=unreachable)
        done = subprocess.run(
            command(workspace, *shards), env=env, capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 2, done.stderr
    assert f"cannot reach Discord's gateway at {unreachable}" in done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_it_registers_the_commands_and_stops_on_sigterm(workspace: str) -> None:
    """The gateway here accepts the connection and says nothing: the bot waits on it, as on
    a quiet Discord, until SIGTERM."""
    with DiscordServer() as discord, socket.create_server(("127.0.0.1", 0)) as silent:
        gateway = f"ws://127.0.0.1:{silent.getsockname()[1]}/"
        process = subprocess.Popen(
            command(workspace, "--guild", GUILD, "--channel", "deliberation"),
            env=environment(**discord.env(), DISCORD_GATEWAY_URL=gateway),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            # a deadline, not a wait: a bot that starts in 2 s took over 30 on a loaded machine
            discord.wait_until(lambda: discord.commands.get(GUILD), 120)
            assert [c["name"] for c in discord.commands[GUILD]] == ["deliberate"]
            connection, _ = silent.accept()  # the bot came for the gateway
            process.send_signal(signal.SIGTERM)
            _, stderr = process.communicate(timeout=30)
            connection.close()
        finally:
            process.kill()
    assert process.returncode == 0, stderr
