"""discord.sendMessage against a local Discord REST API, through httpx."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from connectors.discord import SendMessageArgs, nonce_for
from connectors.remote_errors import EXCERPT_CHARS
from core.field_errors import plain_problems
from rules.connector_api import ConnectorError
from tests.connectors.conftest import context, run
from tests.servers.discord_api import MESSAGES, DiscordServer, discord_error

ARGS = {"channel_id": "1234567890", "content": "stream is live"}


def test_send_message(discord: DiscordServer) -> None:
    result = run("discord.sendMessage", ARGS, context(discord.env(), key="mut-3:r:0"))

    assert result == {"id": discord.messages[0]["id"]}
    request = discord.requests[-1]
    assert request.path == "/api/v10/channels/1234567890/messages"
    assert request.header("Authorization") == f"Bot {discord.token}"
    assert request.json["content"] == "stream is live"
    assert request.json["nonce"] == nonce_for("mut-3:r:0")
    assert len(request.json["nonce"]) <= 25
    assert discord.token not in str(result)


def test_a_retried_step_gets_the_same_message_back(discord: DiscordServer) -> None:
    """The nonce with enforce_nonce makes Discord return the message already created."""
    first = run("discord.sendMessage", ARGS, context(discord.env(), key="mut-3:r:0"))
    again = run("discord.sendMessage", ARGS, context(discord.env(), key="mut-3:r:0"))
    other = run("discord.sendMessage", ARGS, context(discord.env(), key="mut-4:r:0"))

    assert first == again != other
    assert len(discord.messages) == 2


def test_discords_message_and_code_become_the_error(discord: DiscordServer) -> None:
    with pytest.raises(ConnectorError) as caught:
        run("discord.sendMessage", {"channel_id": "999", "content": "hi"}, context(discord.env()))

    assert caught.value.message == "discord: HTTP 404 Unknown Channel (code 10003)"
    assert not caught.value.retryable


def test_a_wrong_token_is_unauthorized_and_never_shown(discord: DiscordServer) -> None:
    env = {**discord.env(), "DISCORD_TOKEN": "wrong-discord-token"}

    with pytest.raises(ConnectorError) as caught:
        run("discord.sendMessage", ARGS, context(env))

    assert caught.value.message == "discord: HTTP 401 401: Unauthorized (code 0)"
    assert "wrong-discord-token" not in str(caught.value)


def test_a_missing_token_names_the_variable(discord: DiscordServer) -> None:
    with pytest.raises(ConnectorError) as caught:
        run("discord.sendMessage", ARGS, context({"DISCORD_API_URL": discord.api_url}))

    assert caught.value.message == "discord: DISCORD_TOKEN is not set"
    assert discord.requests == []


def test_a_429_waits_retry_after_and_retries(discord: DiscordServer) -> None:
    discord.rate_limit_next(retry_after=0.3, times=2)

    result = run("discord.sendMessage", ARGS, context(discord.env()))

    assert result == {"id": discord.messages[0]["id"]}
    first, second, third = discord.requests_to("POST", MESSAGES)
    assert second.received_at - first.received_at >= 0.3
    assert third.received_at - second.received_at >= 0.3


def test_a_429_past_the_retries_is_retryable(discord: DiscordServer) -> None:
    discord.rate_limit_next(retry_after=0.05, times=3)

    with pytest.raises(ConnectorError) as caught:
        run("discord.sendMessage", ARGS, context(discord.env()))

    assert caught.value.message == "discord: HTTP 429 You are being rate limited. (code 0)"
    assert caught.value.retryable
    assert len(discord.requests) == 3


def test_a_long_retry_after_is_left_to_the_job(discord: DiscordServer) -> None:
    discord.rate_limit_next(retry_after=3600)

    with pytest.raises(ConnectorError) as caught:
        run("discord.sendMessage", ARGS, context(discord.env()))

    assert caught.value.retryable
    assert len(discord.requests) == 1


def test_a_5xx_is_retryable(discord: DiscordServer) -> None:
    discord.script("POST", MESSAGES, discord_error(502, "Bad Gateway"))

    with pytest.raises(ConnectorError) as caught:
        run("discord.sendMessage", ARGS, context(discord.env()))

    assert caught.value.retryable


@pytest.mark.parametrize("channel_id", ["../../guilds/1", "#general", "", "12a", "1" * 26])
def test_a_channel_id_must_be_a_snowflake(channel_id: str) -> None:
    with pytest.raises(ValidationError) as caught:
        run("discord.sendMessage", {"channel_id": channel_id, "content": "x"}, context({}))
    assert plain_problems(caught.value, SendMessageArgs) == [
        (("channel_id",), "expected a Discord channel id (a number, its snowflake)")
    ]


def test_a_long_error_message_is_cut_as_an_excerpt(discord: DiscordServer) -> None:
    """Discord's (or whatever answers at DISCORD_API_URL) ``message`` was kept whole in the
    step's error: a megabyte of it, in the ledger, the trace and ``why``."""
    discord.script("POST", MESSAGES, discord_error(400, "x" * 1_000_000 + " end", 50035))

    with pytest.raises(ConnectorError) as caught:
        run("discord.sendMessage", ARGS, context(discord.env()))

    assert caught.value.message == f"discord: HTTP 400 {'x' * EXCERPT_CHARS}…"
