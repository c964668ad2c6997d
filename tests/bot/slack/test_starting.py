"""What the Slack bot says as it starts: no warning from the libraries (Bolt's "`token` will be
unused" came at every start with a bot token), and an install link someone elsewhere can follow,
not the address it listens on."""

from __future__ import annotations

import logging
import signal
import subprocess
import warnings
from collections.abc import Iterator

import pytest
from redis import Redis
from slack_bolt import App as BoltApp

from bot.app import App
from bot.chat.workspaces import Workspaces
from bot.slack.adapter import SlackAdapter
from bot.slack.bolt import build_bolt_app
from bot.slack.links import events_line, install_line, public_base
from bot.slack.settings import SlackSettings
from tests.bot.slack.oauth_rig import forget, new_client_id
from tests.bot.slack.rig import SIGNING_SECRET
from tests.bot.slack.test_run_command import command, environment
from tests.logs import LogLines, logged
from tests.logs import said as in_words
from tests.servers.slack_api import SlackServer


@pytest.fixture
def everything_logged() -> Iterator[LogLines]:
    with logged() as lines, warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        yield lines
    assert [str(w.message) for w in warned] == []


def warnings_in(lines: LogLines) -> list[str]:
    return [r.getMessage() for r in lines.records if r.levelno >= logging.WARNING]


def test_with_a_bot_token_in_the_environment_bolt_starts_without_a_warning(
    app: App, monkeypatch: pytest.MonkeyPatch, everything_logged: LogLines
) -> None:
    with SlackServer() as slack:
        monkeypatch.setenv("SLACK_BOT_TOKEN", slack.token)  # as `deliberate run slack` has it
        settings = SlackSettings.from_env(slack.env() | {"SLACK_SIGNING_SECRET": SIGNING_SECRET})
        adapter = SlackAdapter(Workspaces(app, use_env=False), settings.web_client())
        # Bolt on its own warns here: the case is the one the bot starts in
        with logged("bolt-alone") as alone:
            BoltApp(client=settings.web_client(), logger=logging.getLogger("bolt-alone"))
        assert "`token` will be unused" in alone.text()
        everything_logged.records.clear()

        bolt = build_bolt_app(adapter, settings)

    assert bolt.client is adapter.client
    assert warnings_in(everything_logged) == []


def test_an_installable_app_starts_without_a_warning(
    app: App, redis_client: Redis, everything_logged: LogLines
) -> None:
    client_id = new_client_id()
    try:
        with SlackServer(client_id=client_id) as slack:
            env = slack.oauth_env() | {"SLACK_SIGNING_SECRET": SIGNING_SECRET}
            settings = SlackSettings.from_env(env)
            assert settings.oauth is not None
            adapter = SlackAdapter(Workspaces(app, use_env=False), settings.web_client())
            build_bolt_app(adapter, settings, oauth=settings.oauth.settings(redis_client))
    finally:
        forget(redis_client, client_id)
    assert warnings_in(everything_logged) == []


@pytest.mark.parametrize(
    ("env", "host", "link"),
    [
        ({}, "127.0.0.1", "http://127.0.0.1:3000/slack/install"),
        ({}, "::1", "http://[::1]:3000/slack/install"),
        ({}, "bot.internal", "http://bot.internal:3000/slack/install"),
        (
            {"DELIBERATE_WEB_URL": "https://deliberate.example.org/"},
            "0.0.0.0",
            "https://deliberate.example.org/slack/install",
        ),
        (
            {"DELIBERATE_WEB_URL": "https://deliberate.example.org:8443/admin"},
            "127.0.0.1",
            "https://deliberate.example.org:8443/slack/install",
        ),
        (  # Slack sends the installer back to this very server
            {
                "SLACK_REDIRECT_URI": "https://bot.example.org/slack/oauth_redirect",
                "DELIBERATE_WEB_URL": "https://web.example.org",
            },
            "0.0.0.0",
            "https://bot.example.org/slack/install",
        ),
    ],
)
def test_the_install_link_is_where_people_reach_the_server(
    env: dict[str, str], host: str, link: str
) -> None:
    assert install_line(env, host, 3000) == f"teams install the app at {link}"


@pytest.mark.parametrize("host", ["0.0.0.0", "::", ""])
@pytest.mark.parametrize("env", [{}, {"DELIBERATE_WEB_URL": "deliberate.example.org"}])
def test_listening_everywhere_with_no_address_known_it_says_how_to_set_one(
    env: dict[str, str], host: str
) -> None:
    assert public_base(env, host, 3000) is None
    line = install_line(env, host, 3000)
    assert "DELIBERATE_WEB_URL=https://" in line and "/slack/install" in line
    assert "http://0.0.0.0" not in line


@pytest.mark.parametrize(
    ("env", "host", "line"),
    [
        ({}, "127.0.0.1", "Slack requests go to http://127.0.0.1:3000/slack/events"),
        (
            {"DELIBERATE_WEB_URL": "https://deliberate.example.org/"},
            "0.0.0.0",
            "Slack requests go to https://deliberate.example.org/slack/events "
            "(it listens on every interface port 3000)",
        ),
        (
            {"DELIBERATE_WEB_URL": "https://deliberate.example.org"},
            "10.0.0.5",
            "Slack requests go to https://deliberate.example.org/slack/events "
            "(it listens on 10.0.0.5 port 3000)",
        ),
    ],
)
def test_the_request_url_is_where_slack_reaches_the_server(
    env: dict[str, str], host: str, line: str
) -> None:
    assert events_line(env, host, 3000) == line


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_listening_everywhere_the_request_url_says_how_to_print_it(host: str) -> None:
    line = events_line({}, host, 3000)
    assert "0.0.0.0" not in line and "/slack/events" in line
    assert "every interface port 3000" in line and "DELIBERATE_WEB_URL=https://" in line


def test_the_running_bot_prints_the_public_install_link_and_no_warning(
    workspace: str, redis_client: Redis
) -> None:
    client_id = new_client_id()
    try:
        with SlackServer(client_id=client_id) as slack:
            env = environment(
                **slack.oauth_env(),
                SLACK_SIGNING_SECRET=SIGNING_SECRET,
                DELIBERATE_WEB_URL="https://deliberate.example.org",
            )
            argv = [*command(workspace), "--host", "0.0.0.0", "--port", "0"]
            proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True)
            said = []
            try:
                assert proc.stderr is not None
                for line in proc.stderr:
                    said.append(line)
                    if "teams install the app at" in line:
                        break
            finally:
                proc.send_signal(signal.SIGINT)
                assert proc.wait(timeout=20) == 0
    finally:
        forget(redis_client, client_id)
    text = "".join(said)
    said_to_people = [words for line in said if (words := in_words(line)) is not None]
    assert said_to_people[-1] == (
        "deliberate: teams install the app at https://deliberate.example.org/slack/install"
    )
    assert '"level": "warning"' not in text and "0.0.0.0" not in "".join(said_to_people)
    events = "deliberate: Slack requests go to https://deliberate.example.org/slack/events"
    assert any(words.startswith(events) for words in said_to_people)
