"""``deliberate redis status|stop`` on a data directory of the test's own, as real processes;
and the embedded server's own failures said in one line."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from redis import Redis

from bot.main import COMMANDS, listing, parser
from bot.redis.embedded import alive
from tests.faults.embedded import Home, cli, serving

WRITE = ("state", "set", "decision.db", "postgres", "--actor", "user:a")


def test_status_and_stop_when_none_runs_start_nothing(embedded_home: Home) -> None:
    status = embedded_home.run("redis", "status")
    assert status.returncode == 1
    assert status.stdout.strip() == (
        f"the embedded Redis of {embedded_home.path} is not running "
        "(the next command that needs it starts it)"
    )
    stop = embedded_home.run("redis", "stop")
    assert stop.returncode == 0 and "is not running: nothing to stop" in stop.stdout
    assert not embedded_home.path.exists() and serving(embedded_home.server.socket) == []


def test_status_shows_the_running_server(embedded_home: Home) -> None:
    assert embedded_home.run(*WRITE).returncode == 0
    status = embedded_home.run("redis", "status")
    assert status.returncode == 0, status.stderr
    pid = embedded_home.pid()
    for line in (
        f"the embedded Redis of {embedded_home.path} is running",
        f"pid:        {pid}",
        f"socket:     unix://{embedded_home.server.socket}",
        f"data:       {embedded_home.path} (appendonly.aof: ",
        "memory:     ",
        "uptime:     ",
        "durability: appendfsync always",
    ):
        assert line in status.stdout
    report = json.loads(embedded_home.run("redis", "status", "--json").stdout)
    assert (report["running"], report["in_use"], report["pid"]) == (True, True, pid)
    assert report["used_memory"] > 0 and report["aof_bytes"] > 0


def test_the_server_outlives_the_command_and_serves_the_next(embedded_home: Home) -> None:
    assert embedded_home.run(*WRITE).returncode == 0
    pid = embedded_home.pid()
    assert embedded_home.run("state", "get", "decision.db").returncode == 0
    assert embedded_home.pid() == pid and serving(embedded_home.server.socket) == [pid]


def test_stop_saves_waits_and_the_next_command_starts_it_again(embedded_home: Home) -> None:
    assert embedded_home.run(*WRITE).returncode == 0
    pid = embedded_home.pid()
    stop = embedded_home.run("redis", "stop")
    assert stop.returncode == 0
    said = f"stopped the embedded Redis of {embedded_home.path} (pid {pid}); data saved"
    assert stop.stdout.strip() == said
    assert not alive(pid) and not embedded_home.server.socket.exists()
    assert (embedded_home.path / "redis.db").exists()  # the snapshot SHUTDOWN SAVE wrote
    got = embedded_home.run("state", "get", "decision.db", "--json")
    assert got.returncode == 0 and json.loads(got.stdout)["value"] == "postgres"
    assert embedded_home.pid() != pid


def test_stop_refuses_while_another_client_uses_it_unless_forced(embedded_home: Home) -> None:
    assert embedded_home.run(*WRITE).returncode == 0
    pid = embedded_home.pid()
    other = Redis(unix_socket_path=str(embedded_home.server.socket))
    try:
        assert other.ping()
        refused = embedded_home.run("redis", "stop")
        assert refused.returncode == 1 and alive(pid)
        [line] = refused.stderr.splitlines()
        assert "1 other client(s) use the embedded Redis" in line and "--force" in line
        forced = embedded_home.run("redis", "stop", "--force")
        assert forced.returncode == 0 and not alive(pid)
    finally:
        other.close()


def test_status_says_when_redis_url_puts_the_embedded_server_out_of_use(
    embedded_home: Home,
) -> None:
    url = os.environ["REDIS_URL"]  # the session's server
    env = {**embedded_home.env, "REDIS_URL": url}
    status = cli("redis", "status", env=env)
    assert status.stdout.splitlines()[0].startswith("REDIS_URL is set: commands use ")
    assert "not the embedded server" in status.stdout and status.returncode == 1
    flag = cli("--redis-url", "redis://127.0.0.1:1/0", "redis", "status", env=embedded_home.env)
    assert flag.stdout.startswith("--redis-url is set: commands use redis://127.0.0.1:1/0,")
    assert json.loads(cli("redis", "status", "--json", env=env).stdout)["in_use"] is False


def test_redis_commands_need_no_config(embedded_home: Home, tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("policy: [\n", encoding="utf-8")
    assert (
        embedded_home.run("--config", str(broken), "redis", "status").returncode == 1
    )  # not running
    assert embedded_home.run("--config", str(broken), "redis", "stop").returncode == 0


def test_a_server_that_cannot_start_is_one_line(embedded_home: Home) -> None:
    embedded_home.path.mkdir()
    (embedded_home.path / "appendonly.aof").write_text("this is not an append-only file\n")
    done = embedded_home.run("state", "get", "decision.db")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("deliberate: the embedded Redis did not start: ")
    assert f"(see {embedded_home.path / 'redis.log'})" in line


def test_a_home_that_is_not_a_directory_is_one_line(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    embedded_home = Home(not_a_dir)
    done = embedded_home.run("state", "get", "decision.db")
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
    found = listing().parse_known_args
    assert found(["--workspace", "w", "--redis-url", "x", "redis", "status"])[0].command == "redis"
    assert found(["--workspace=w", "state", "get", "k", "--json"])[0].command == "state"
    assert found(["--work", "log", "state", "get", "k"])[0].command == "state"  # log: a value
