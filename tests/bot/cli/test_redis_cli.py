"""``deliberate redis status|stop`` on a data directory of the test's own, as real processes;
and the embedded server's own failures said in one line."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from bot.cli.main import COMMANDS, command_in, parser
from bot.embedded_redis import alive
from tests.faults.embedded import Home, cli, serving

WRITE = ("state", "set", "decision.db", "postgres", "--actor", "user:a")


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    home = Home(tmp_path / "home")
    yield home
    try:
        home.server.stop(force=True)
    finally:
        home.stop_everything()


def test_status_and_stop_when_none_runs_start_nothing(home: Home) -> None:
    status = home.run("redis", "status")
    assert status.returncode == 1
    assert status.stdout.strip() == (
        f"the embedded Redis of {home.path} is not running "
        "(the next command that needs it starts it)"
    )
    stop = home.run("redis", "stop")
    assert stop.returncode == 0 and "is not running: nothing to stop" in stop.stdout
    assert not home.path.exists() and serving(home.server.socket) == []


def test_status_shows_the_running_server(home: Home) -> None:
    assert home.run(*WRITE).returncode == 0
    status = home.run("redis", "status")
    assert status.returncode == 0, status.stderr
    pid = home.pid()
    for line in (
        f"the embedded Redis of {home.path} is running",
        f"pid:        {pid}",
        f"socket:     unix://{home.server.socket}",
        f"data:       {home.path} (appendonly.aof: ",
        "memory:     ",
        "uptime:     ",
        "durability: appendfsync always",
    ):
        assert line in status.stdout
    report = json.loads(home.run("redis", "status", "--json").stdout)
    assert (report["running"], report["in_use"], report["pid"]) == (True, True, pid)
    assert report["used_memory"] > 0 and report["aof_bytes"] > 0


def test_the_server_outlives_the_command_and_serves_the_next(home: Home) -> None:
    assert home.run(*WRITE).returncode == 0
    pid = home.pid()
    assert home.run("state", "get", "decision.db").returncode == 0
    assert home.pid() == pid and serving(home.server.socket) == [pid]


def test_stop_saves_waits_and_the_next_command_starts_it_again(home: Home) -> None:
    assert home.run(*WRITE).returncode == 0
    pid = home.pid()
    stop = home.run("redis", "stop")
    assert stop.returncode == 0
    said = f"stopped the embedded Redis of {home.path} (pid {pid}); data saved"
    assert stop.stdout.strip() == said
    assert not alive(pid) and not home.server.socket.exists()
    assert (home.path / "redis.db").exists()  # the snapshot SHUTDOWN SAVE wrote
    got = home.run("state", "get", "decision.db", "--json")
    assert got.returncode == 0 and json.loads(got.stdout)["value"] == "postgres"
    assert home.pid() != pid


def test_stop_refuses_while_another_client_uses_it_unless_forced(home: Home) -> None:
    assert home.run(*WRITE).returncode == 0
    pid = home.pid()
    other = Redis(unix_socket_path=str(home.server.socket))
    try:
        assert other.ping()
        refused = home.run("redis", "stop")
        assert refused.returncode == 1 and alive(pid)
        [line] = refused.stderr.splitlines()
        assert "1 other client(s) use the embedded Redis" in line and "--force" in line
        forced = home.run("redis", "stop", "--force")
        assert forced.returncode == 0 and not alive(pid)
    finally:
        other.close()


def test_status_says_when_redis_url_puts_the_embedded_server_out_of_use(home: Home) -> None:
    url = os.environ["REDIS_URL"]  # the session's server
    env = {**home.env, "REDIS_URL": url}
    status = cli("redis", "status", env=env)
    assert status.stdout.splitlines()[0].startswith("REDIS_URL is set: commands use ")
    assert "not the embedded server" in status.stdout and status.returncode == 1
    flag = cli("--redis-url", "redis://127.0.0.1:1/0", "redis", "status", env=home.env)
    assert flag.stdout.startswith("--redis-url is set: commands use redis://127.0.0.1:1/0,")
    assert json.loads(cli("redis", "status", "--json", env=env).stdout)["in_use"] is False


def test_redis_commands_need_no_config(home: Home, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("policy: [\n", encoding="utf-8")
    assert home.run("--config", str(broken), "redis", "status").returncode == 1  # not running
    assert home.run("--config", str(broken), "redis", "stop").returncode == 0


def test_a_server_that_cannot_start_is_one_line(home: Home) -> None:
    home.path.mkdir()
    (home.path / "appendonly.aof").write_text("this is not an append-only file\n")
    done = home.run("state", "get", "decision.db")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("deliberate: the embedded Redis did not start: ")
    assert f"(see {home.path / 'redis.log'})" in line


def test_a_home_that_is_not_a_directory_is_one_line(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    home = Home(not_a_dir)
    done = home.run("state", "get", "decision.db")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"deliberate: cannot start the embedded Redis in {not_a_dir}: ")


def test_every_command_is_in_the_registry_that_imports_it_alone() -> None:
    """A command missing from ``COMMANDS`` still works, but loads every command's module."""
    everything = parser()
    [commands] = [a for a in everything._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(commands.choices) == set(COMMANDS)
    for name in COMMANDS:
        alone = parser(name)
        [sub] = [a for a in alone._actions if isinstance(a, argparse._SubParsersAction)]
        assert name in sub.choices
    assert command_in(["--workspace", "w", "--redis-url", "x", "redis", "status"]) == "redis"
    assert command_in(["--workspace=w", "state", "get", "k"]) == "state"
    assert command_in(["--help"]) is None and command_in(["nope"]) is None
