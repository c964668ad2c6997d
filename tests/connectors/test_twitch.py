"""The Twitch actions against a local Helix server, through httpx."""

from __future__ import annotations

import math
import time

import pytest

from connectors.remote_errors import EXCERPT_CHARS
from rules.connector_api import ConnectorError
from tests.connectors.conftest import context, run
from tests.servers.helix import ANNOUNCEMENTS, CHAT, CLIPS, HelixServer, helix_error
from tests.servers.http import Response


def test_create_clip_returns_the_clip(helix: HelixServer) -> None:
    result = run("twitch.createClip", {"has_delay": True}, context(helix.env()))

    assert result == {"id": helix.clips[0]["id"], "edit_url": helix.clips[0]["edit_url"]}
    request = helix.requests[-1]
    assert request.arg("broadcaster_id") == "1001"
    assert request.arg("has_delay") == "true"
    assert request.header("Client-Id") == helix.client_id
    assert request.header("Authorization") == f"Bearer {helix.token}"
    assert helix.token not in str(result)


def test_send_announcement(helix: HelixServer) -> None:
    env = {**helix.env(), "TWITCH_MODERATOR_ID": "1001"}

    result = run("twitch.sendAnnouncement", {"message": "hydrate", "color": "purple"}, context(env))

    assert result == {"sent": True}
    assert helix.announcements == [{"message": "hydrate", "color": "purple"}]
    assert helix.requests[-1].arg("moderator_id") == "1001"


def test_an_announcement_without_a_color_leaves_it_to_twitch(helix: HelixServer) -> None:
    run("twitch.sendAnnouncement", {"message": "hi"}, context(helix.env()))

    assert helix.requests[-1].json == {"message": "hi"}


def test_a_color_outside_twitchs_list_is_refused_before_sending() -> None:
    with pytest.raises(ValueError, match="color"):
        run("twitch.sendAnnouncement", {"message": "hi", "color": "red"}, context({}))


def test_send_chat_message(helix: HelixServer) -> None:
    env = {**helix.env(), "TWITCH_SENDER_ID": "2002"}

    result = run("twitch.sendChatMessage", {"message": "gg"}, context(env))

    sent = helix.chat_messages[0]
    assert result == {"message_id": sent["message_id"], "is_sent": True}
    assert helix.requests[-1].json == {
        "broadcaster_id": "1001",
        "sender_id": "2002",
        "message": "gg",
    }


def test_a_dropped_chat_message_carries_twitchs_reason(helix: HelixServer) -> None:
    helix.drop_next_chat_message("msg_duplicate", "Your message is identical to the last one.")

    with pytest.raises(ConnectorError) as caught:
        run("twitch.sendChatMessage", {"message": "gg"}, context(helix.env()))

    assert caught.value.message == (
        "twitch: chat message dropped: Your message is identical to the last one. (msg_duplicate)"
    )
    assert not caught.value.retryable


def test_a_helix_error_carries_its_message_and_never_the_token(helix: HelixServer) -> None:
    env = {**helix.env(), "TWITCH_ACCESS_TOKEN": "wrong-token-value"}

    with pytest.raises(ConnectorError) as caught:
        run("twitch.createClip", {}, context(env))

    assert caught.value.message == "twitch: HTTP 401 Invalid OAuth token"
    assert not caught.value.retryable
    assert "wrong-token-value" not in str(caught.value)


def test_a_server_echoing_the_token_does_not_leak_it(helix: HelixServer) -> None:
    echo = helix_error(400, "Bad Request", f"bad header Authorization: Bearer {helix.token}")
    helix.script("POST", CLIPS, echo)

    with pytest.raises(ConnectorError) as caught:
        run("twitch.createClip", {}, context(helix.env()))

    assert helix.token not in str(caught.value)
    assert "bad header Authorization: Bearer ***" in caught.value.message


def test_a_long_error_message_is_cut_as_an_excerpt(helix: HelixServer) -> None:
    """Helix's ``message`` was kept whole in the step's error, however long."""
    helix.script("POST", CLIPS, helix_error(400, "Bad Request", "y" * 1_000_000))

    with pytest.raises(ConnectorError) as caught:
        run("twitch.createClip", {}, context(helix.env()))

    assert caught.value.message == f"twitch: HTTP 400 {'y' * EXCERPT_CHARS}…"


def test_a_5xx_is_retryable_with_a_body_excerpt(helix: HelixServer) -> None:
    helix.script("POST", ANNOUNCEMENTS, Response(503, body=b"<html>upstream unavailable</html>"))

    with pytest.raises(ConnectorError) as caught:
        run("twitch.sendAnnouncement", {"message": "hi"}, context(helix.env()))

    assert caught.value.message == "twitch: HTTP 503 <html>upstream unavailable</html>"
    assert caught.value.retryable


@pytest.mark.parametrize(
    "missing", ["TWITCH_CLIENT_ID", "TWITCH_ACCESS_TOKEN", "TWITCH_BROADCASTER_ID"]
)
def test_a_missing_setting_names_the_variable(helix: HelixServer, missing: str) -> None:
    env = {name: value for name, value in helix.env().items() if name != missing}

    with pytest.raises(ConnectorError) as caught:
        run("twitch.sendChatMessage", {"message": "gg"}, context(env))

    assert caught.value.message == f"twitch: {missing} is not set"
    assert not caught.value.retryable
    assert helix.requests == []


def test_an_unreachable_helix_is_retryable() -> None:
    with HelixServer() as gone:
        env = gone.env()

    with pytest.raises(ConnectorError) as caught:
        run("twitch.createClip", {}, context(env))

    assert caught.value.message.startswith("twitch: connection failed")
    assert caught.value.retryable


def test_a_429_waits_until_the_reset_then_retries(helix: HelixServer) -> None:
    reset = math.ceil(time.time() + 0.3)  # whole seconds, as Helix sends
    limited = helix_error(429, "Too Many Requests", "Too Many Requests")
    helix.script(
        "POST",
        CHAT,
        limited.with_headers({"Ratelimit-Remaining": "0", "Ratelimit-Reset": str(reset)}),
    )

    result = run("twitch.sendChatMessage", {"message": "gg"}, context(helix.env()))

    assert result["is_sent"] is True
    _, second = helix.requests_to("POST", CHAT)
    assert second.received_at >= reset
    assert len(helix.chat_messages) == 1


def test_an_empty_bucket_makes_the_next_call_wait(helix: HelixServer) -> None:
    """The server answers 429 to anything before the reset; the connector must not ask."""
    reset = math.ceil(time.time() + 0.3)  # whole seconds, as Helix sends
    helix.set_bucket(remaining=1, reset_at=reset)
    ctx = context(helix.env())

    run("twitch.createClip", {}, ctx)
    run("twitch.createClip", {}, ctx)

    _, second = helix.requests_to("POST", CLIPS)
    assert second.received_at >= reset
    assert len(helix.clips) == 2  # no request was answered 429
