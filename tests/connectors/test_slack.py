"""slack.postMessage against a local Slack Web API, through slack_sdk's WebClient."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from connectors.slack import PostMessageArgs
from core.field_errors import plain_problems
from rules.connector_api import ConnectorError
from tests.connectors.conftest import context, run
from tests.logs import LogLines
from tests.servers.http import Response
from tests.servers.slack_api import POST_MESSAGE, SlackServer, slack_error


def test_post_message(slack: SlackServer, all_logs: LogLines) -> None:
    result = run(
        "slack.postMessage", {"channel": "C0GENERAL", "text": "shipped"}, context(slack.env())
    )

    assert result == {"channel": "C0GENERAL", "ts": slack.messages[0]["ts"]}
    assert slack.messages[0]["text"] == "shipped"
    assert slack.requests[-1].header("Authorization") == f"Bearer {slack.token}"
    assert slack.token not in str(result)
    assert slack.token not in all_logs.text()


def test_post_in_a_thread(slack: SlackServer) -> None:
    args = {"channel": "C0GENERAL", "text": "reply", "thread_ts": "1700000000.000100"}

    run("slack.postMessage", args, context(slack.env()))

    assert slack.messages[0]["thread_ts"] == "1700000000.000100"


def test_the_api_url_gets_its_trailing_slash(slack: SlackServer) -> None:
    env = {**slack.env(), "SLACK_API_URL": slack.url + "/api"}

    run("slack.postMessage", {"channel": "C0GENERAL", "text": "hi"}, context(env))

    assert slack.requests[-1].path == POST_MESSAGE


def test_slacks_error_code_becomes_the_message(slack: SlackServer) -> None:
    with pytest.raises(ConnectorError) as caught:
        run("slack.postMessage", {"channel": "C0NOPE", "text": "hi"}, context(slack.env()))

    assert caught.value.message == "slack: channel_not_found"
    assert not caught.value.retryable


def test_a_wrong_token_is_invalid_auth_and_never_shown(slack: SlackServer) -> None:
    env = {**slack.env(), "SLACK_BOT_TOKEN": "xoxb-wrong-token-value"}

    with pytest.raises(ConnectorError) as caught:
        run("slack.postMessage", {"channel": "C0GENERAL", "text": "hi"}, context(env))

    assert caught.value.message == "slack: invalid_auth"
    assert "xoxb-wrong-token-value" not in str(caught.value)


def test_a_missing_token_names_the_variable(slack: SlackServer) -> None:
    with pytest.raises(ConnectorError) as caught:
        run(
            "slack.postMessage",
            {"channel": "C0GENERAL", "text": "hi"},
            context({"SLACK_API_URL": slack.api_url}),
        )

    assert caught.value.message == "slack: SLACK_BOT_TOKEN is not set"
    assert slack.requests == []


def test_a_429_is_retried_after_retry_after(slack: SlackServer) -> None:
    slack.rate_limit_next(retry_after=0)

    result = run("slack.postMessage", {"channel": "C0GENERAL", "text": "hi"}, context(slack.env()))

    assert result["ts"] == slack.messages[0]["ts"]
    assert len(slack.requests_to("POST", POST_MESSAGE)) == 2


def test_a_429_that_persists_is_retryable(slack: SlackServer) -> None:
    slack.rate_limit_next(retry_after=0, times=2)

    with pytest.raises(ConnectorError) as caught:
        run("slack.postMessage", {"channel": "C0GENERAL", "text": "hi"}, context(slack.env()))

    assert caught.value.message == "slack: ratelimited"
    assert caught.value.retryable
    assert slack.messages == []


def test_a_5xx_is_retryable(slack: SlackServer) -> None:
    slack.script("POST", POST_MESSAGE, Response(503, body=b"<html>maintenance</html>"))

    with pytest.raises(ConnectorError) as caught:
        run("slack.postMessage", {"channel": "C0GENERAL", "text": "hi"}, context(slack.env()))

    assert caught.value.retryable
    assert caught.value.message.startswith("slack: ")


def test_an_internal_error_with_200_is_retryable(slack: SlackServer) -> None:
    slack.script("POST", POST_MESSAGE, slack_error("internal_error"))

    with pytest.raises(ConnectorError) as caught:
        run("slack.postMessage", {"channel": "C0GENERAL", "text": "hi"}, context(slack.env()))

    assert caught.value.retryable


def test_an_unreachable_slack_is_retryable() -> None:
    with SlackServer() as gone:
        env = gone.env()

    with pytest.raises(ConnectorError) as caught:
        run("slack.postMessage", {"channel": "C0GENERAL", "text": "hi"}, context(env))

    assert caught.value.retryable
    assert caught.value.message.startswith("slack: connection failed")


@pytest.mark.parametrize(
    "channel", ["#not a channel", "General", "<#C0GENERAL>", "#" + "x" * 81, "C", "", "#"]
)
def test_a_channel_must_be_one_slack_can_post_to(channel: str) -> None:
    """Text that is no channel id, person's id or channel name: refused by the action's own
    schema (what the worker and ``rules test`` check), before anything is sent."""
    with pytest.raises(ValidationError) as caught:
        PostMessageArgs.model_validate({"channel": channel, "text": "hi"})
    assert plain_problems(caught.value, PostMessageArgs) == [
        (
            ("channel",),
            "expected a Slack channel: its id (C…, G…, D…), a person's id (U…) or its name "
            "(#general)",
        )
    ]


@pytest.mark.parametrize(
    "channel", ["C0GENERAL", "G0PRIVATE", "D024BE91L", "U0PERSON", "#general", "decisions-2026"]
)
def test_channel_ids_a_persons_id_and_channel_names_are_taken(channel: str) -> None:
    assert PostMessageArgs.model_validate({"channel": channel, "text": "hi"}).channel == channel


def test_a_message_needs_its_text() -> None:
    with pytest.raises(ValidationError) as caught:
        PostMessageArgs.model_validate({"channel": "C0GENERAL"})
    assert plain_problems(caught.value, PostMessageArgs) == [
        (("text",), "is required, and missing")
    ]
