"""What the HTTP mode does with bodies an attacker would send: too large (announced or
chunked), not UTF-8, not a payload at all. Through the real waitress server and the real Bolt
app, with raw sockets where an HTTP client would not send such a thing."""

from __future__ import annotations

import hmac
import json
import logging
import select
import socket
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest
from redis import Redis

from bot.app import App, build_app
from bot.slack.serve import MAX_BODY_BYTES
from tests.bot.slack.rig import SIGNING_SECRET, SlackBot
from tests.team_config import team_config

HUGE = 300 * 1024 * 1024


@pytest.fixture
def team_app(redis_client: Redis, workspace: str, tmp_path: Path) -> App:
    """No role bindings: nothing here should reach a role."""
    return build_app(workspace, team_config(tmp_path, [], []), client=redis_client)


def connect(bot: SlackBot) -> socket.socket:
    return socket.create_connection(("127.0.0.1", bot.server.effective_port), timeout=10)


def head(content_type: str, framing: str) -> bytes:
    return (
        "POST /slack/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: {content_type}\r\n{framing}\r\n\r\n"
    ).encode()


def status_of(answer: bytes) -> int:
    assert answer.startswith(b"HTTP/1."), answer[:80]
    return int(answer.split(b" ", 2)[1])


def read_answer(sock: socket.socket) -> bytes:
    """What the server answered, up to its closing the connection (or a reset after it)."""
    got = b""
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except ConnectionResetError:
        pass
    return got


def signature(body: bytes) -> dict[str, str]:
    """Slack's signature over the very bytes (slack-sdk's signs text, as UTF-8)."""
    stamp = str(int(time.time()))
    mac = hmac.new(SIGNING_SECRET.encode(), b"v0:%s:%s" % (stamp.encode(), body), "sha256")
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={mac.hexdigest()}"}


def assert_nothing_happened(bot: SlackBot, app: App, caplog: pytest.LogCaptureFixture) -> None:
    bot.listeners.idle()
    assert bot.listeners.futures == [] and bot.slack.messages == []
    assert len(app.log) == 0
    noisy = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert noisy == []


def test_an_announced_huge_body_is_refused_before_it_is_sent(
    bot: SlackBot, team_app: App, caplog: pytest.LogCaptureFixture
) -> None:
    with connect(bot) as sock:
        sock.sendall(head("application/json", f"Content-Length: {HUGE}"))  # and not one byte
        answer = read_answer(sock)
    assert status_of(answer) == 413
    assert_nothing_happened(bot, team_app, caplog)


def test_a_chunked_body_is_cut_off_once_it_grows_past_the_cap(
    bot: SlackBot, team_app: App, caplog: pytest.LogCaptureFixture
) -> None:
    """Chunks of 64 KiB until the server answers: it answers 413 after about the cap, long
    before the 64 MiB the client was ready to send (before the cap, it read them all).
    Socket buffers take a few MiB more than the server reads."""
    piece = b"x" * 65536
    chunk = b"%x\r\n%s\r\n" % (len(piece), piece)
    ready, sent = 64 * 1024 * 1024, 0
    with connect(bot) as sock:
        sock.sendall(head("application/json", "Transfer-Encoding: chunked"))
        while sent < ready and not select.select([sock], [], [], 0)[0]:
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                break  # the server stopped reading
            sent += len(piece)
        if sent == ready:
            sock.sendall(b"0\r\n\r\n")  # the whole body: the server read it all
        answer = read_answer(sock)
    assert status_of(answer) == 413
    assert sent < ready
    assert_nothing_happened(bot, team_app, caplog)


def test_a_signed_body_just_under_the_cap_is_served(bot: SlackBot) -> None:
    challenge = {"type": "url_verification", "token": "t", "challenge": "c0ffee"}
    padding = MAX_BODY_BYTES - len(json.dumps(challenge | {"padding": ""}))
    body = json.dumps(challenge | {"padding": "p" * padding})
    assert len(body.encode()) == MAX_BODY_BYTES
    answered = bot.post(body, "application/json")
    assert answered.status_code == 200 and answered.json() == {"challenge": "c0ffee"}


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/json", b'{"type": "event_callback", "x": "\xff\xfe"}'),
        ("application/x-www-form-urlencoded", b"payload=\xc3\x28"),
        ("application/json", b"{not json"),
        ("application/json", b"[1, 2, 3]"),
        ("application/json", b"[" * 100_000),
        ("application/x-www-form-urlencoded", b"payload=%7Bnot+json"),
        ("application/json", b'{"type": "event_callback", "team": 5, "authorizations": 1}'),
    ],
    ids=[
        "not-utf8-json",
        "not-utf8-form",
        "bad-json",
        "json-array",
        "deep-json",
        "bad-payload",
        "wrong-shape",
    ],
)
@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
def test_a_body_that_is_not_a_payload_is_a_400_without_a_traceback(
    bot: SlackBot,
    team_app: App,
    caplog: pytest.LogCaptureFixture,
    content_type: str,
    body: bytes,
    signed: bool,
) -> None:
    headers = {"Content-Type": content_type} | (signature(body) if signed else {})
    answered = bot.http.post(bot.url, content=body, headers=headers)
    assert answered.status_code == 400
    assert_nothing_happened(bot, team_app, caplog)


def test_a_well_formed_unsigned_form_is_still_a_401(bot: SlackBot, team_app: App) -> None:
    form = urlencode({"payload": json.dumps({"type": "block_actions"})})
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    assert bot.http.post(bot.url, content=form, headers=headers).status_code == 401
    assert len(team_app.log) == 0
