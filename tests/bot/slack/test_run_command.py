"""``deliberate run slack`` as a real process: it refuses to start without what it needs,
naming it, and in HTTP mode it answers a signed mention in the thread."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from redis import Redis
from slack_sdk.signature import SignatureVerifier

from bot.slack.oauth.keys import OAuthKeys
from tests.bot.slack.oauth_rig import forget, new_client_id
from tests.bot.slack.rig import CHANNEL, SIGNING_SECRET, event_callback, mention
from tests.logs import said
from tests.servers.slack_api import SlackServer, slack_error
from tests.servers.slack_socket import SocketModeServer

SLACK_VARS = ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_API_URL")


def command(workspace: str) -> list[str]:
    return [sys.executable, "-m", "bot.main", "--workspace", workspace, "run", "slack"]


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SLACK_VARS and k != "OPENAI_API_KEY"}
    return env | extra


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ({}, "SLACK_BOT_TOKEN is not set"),
        (
            {"SLACK_BOT_TOKEN": "xoxb-1"},
            "set SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET",
        ),
        (
            {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s"},
            "not both",
        ),
        ({"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s"}, "SLACK_SIGNING_SECRET is not set"),
        ({"SLACK_CLIENT_ID": "1.2"}, "SLACK_CLIENT_SECRET is not set"),
    ],
)
def test_it_names_what_is_missing(workspace: str, extra: dict[str, str], problem: str) -> None:
    done = subprocess.run(
        command(workspace), env=environment(**extra), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and problem in done.stderr


def test_a_refused_token_stops_it_with_a_clear_error(workspace: str) -> None:
    with SlackServer() as slack:
        slack.route("POST", "/api/auth.test", slack_error("invalid_auth"))
        env = environment(**slack.env(), SLACK_SIGNING_SECRET=SIGNING_SECRET)
        done = subprocess.run(
            command(workspace), env=env, capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 2 and "Slack refused the bot token" in done.stderr


@pytest.fixture
def running(workspace: str, tmp_path: Path) -> Iterator[tuple[SlackServer, str]]:
    with SlackServer(channels={CHANNEL}) as slack:
        env = environment(**slack.env(), SLACK_SIGNING_SECRET=SIGNING_SECRET)
        argv = [*command(workspace), "--host", "127.0.0.1", "--port", "0"]
        proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
        try:
            yield slack, listening_url(proc)
        finally:
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=20) == 0


def listening_url(proc: subprocess.Popen[str]) -> str:
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        words = said(line) or ""
        if "Slack requests go to " in words:
            return words.split("Slack requests go to ")[1].strip()
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"deliberate run slack did not start (exit {proc.poll()})")


def test_in_http_mode_it_answers_a_signed_mention_in_the_thread(
    running: tuple[SlackServer, str],
) -> None:
    slack, url = running
    said = mention("what if we used postgres for the event store")
    body = json.dumps(event_callback(said, "Ev0PROCESS"))
    stamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": SignatureVerifier(SIGNING_SECRET).generate_signature(
            timestamp=stamp, body=body
        ),
    }
    assert httpx.post(url, content=body, headers=headers, timeout=10).status_code == 200
    [reply] = slack.wait_until(lambda: slack.messages, timeout=20)
    assert reply["thread_ts"] == said["ts"] and reply["blocks"][-1]["type"] == "actions"


def test_with_an_app_token_it_takes_events_over_socket_mode(workspace: str) -> None:
    with SocketModeServer() as socket, SlackServer(channels={CHANNEL}) as slack:
        slack.socket_url = socket.url
        env = environment(**slack.env(), SLACK_APP_TOKEN=slack.app_token)
        proc = subprocess.Popen(command(workspace), env=env, stderr=subprocess.DEVNULL)
        try:
            socket.wait_connected()
            said = mention("what if we used postgres for the event store")
            envelope = socket.send("events_api", event_callback(said, "Ev0SOCKET"))
            socket.wait_acked(envelope)
            [reply] = slack.wait_until(lambda: slack.messages, timeout=20)
            assert reply["thread_ts"] == said["ts"] and reply["blocks"][-1]["type"] == "actions"
        finally:
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=20) == 0


def test_a_refused_app_token_stops_it_with_a_clear_error(workspace: str) -> None:
    with SlackServer() as slack:  # it answers apps.connections.open with invalid_auth
        env = environment(**slack.env(), SLACK_APP_TOKEN="xapp-1-not-this-app")
        done = subprocess.run(
            command(workspace), env=env, capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 2 and "cannot run the Slack bot" in done.stderr
    assert "invalid_auth" in done.stderr and "Traceback" not in done.stderr


def test_as_an_installable_app_it_serves_the_install_link(
    workspace: str, redis_client: Redis
) -> None:
    client_id = new_client_id()
    try:
        with SlackServer(client_id=client_id) as slack:
            env = environment(**slack.oauth_env(), SLACK_SIGNING_SECRET=SIGNING_SECRET)
            argv = [*command(workspace), "--host", "127.0.0.1", "--port", "0"]
            proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
            try:
                events = listening_url(proc)
                assert proc.stderr is not None
                words = said(proc.stderr.readline()) or ""
                assert "teams install the app at " in words
                install = words.split("teams install the app at ")[1].strip()
                assert install == events.replace("/slack/events", "/slack/install")
                answer = httpx.get(install, timeout=10)
                assert answer.status_code == 302
                authorize = parse_qs(urlsplit(answer.headers["location"]).query)
                assert authorize["client_id"] == [client_id]
                [state] = authorize["state"]
                assert redis_client.exists(OAuthKeys(client_id).state(state))  # the shared Redis
            finally:
                proc.send_signal(signal.SIGINT)
                assert proc.wait(timeout=20) == 0
    finally:
        forget(redis_client, client_id)
