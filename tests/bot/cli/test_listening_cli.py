"""A server's port that is taken, or an address that is not this machine's: ``deliberate web``
and ``deliberate run slack`` (HTTP mode) say so in one line naming the address and port, and
exit 2, never with a traceback."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator

import pytest

from tests.bot.slack.rig import SIGNING_SECRET
from tests.bot.slack.test_run_command import environment
from tests.faults.embedded import cli
from tests.servers.slack_api import SlackServer


@pytest.fixture
def taken() -> Iterator[int]:
    """A port the OS gave another socket, which listens on it."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_web_on_a_port_in_use_says_so_in_one_line(workspace: str, taken: int) -> None:
    said = f"deliberate: cannot listen on 127.0.0.1:{taken}: the port is in use"
    base = ("--workspace", workspace)
    done = cli(*base, "--log-format", "text", "web", "--port", str(taken), env=dict(os.environ))
    assert (done.returncode, done.stderr) == (2, said + "\n")
    # $PORT, and the format a server logs in by default: the same words, as one JSON line
    done = cli(*base, "web", env={**os.environ, "PORT": str(taken)})
    [line] = done.stderr.splitlines()
    record = json.loads(line)
    assert done.returncode == 2 and (record["level"], record["msg"]) == ("error", said)


def test_web_on_an_address_not_of_this_machine_says_so(workspace: str) -> None:
    argv = ("--workspace", workspace, "--log-format", "text", "web", "--host", "203.0.113.7")
    env = {**os.environ, "DELIBERATE_WEB_URL": "https://deliberate.example.org"}
    done = cli(*argv, "--port", "0", env=env)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "deliberate: cannot listen on 203.0.113.7:0: the address is not one of this machine's\n"
    )


def test_the_slack_bot_on_a_port_in_use_says_so_in_one_line(workspace: str, taken: int) -> None:
    with SlackServer() as slack:  # (the bot token is checked first: it answers)
        env = environment(**slack.env(), SLACK_SIGNING_SECRET=SIGNING_SECRET)
        argv = ("--workspace", workspace, "--log-format", "text", "run", "slack")
        done = cli(*argv, "--host", "127.0.0.1", "--port", str(taken), env=env)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"deliberate: cannot listen on 127.0.0.1:{taken}: the port is in use\n"
