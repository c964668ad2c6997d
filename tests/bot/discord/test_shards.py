"""Sharding, with real ``deliberate run discord`` processes against the local gateway, which
routes events as Discord does (a server's to shard ``(id >> 22) % N``, a DM's to shard 0)
and refuses a connection holding more than two of its four servers (Discord: 2,500) with
4011, and the local REST API, which each process reaches at an address of its own
(``/via/NAME/api/v10``), so that what each one sends is told apart.

Two replicas, shard 0/2 (``--shard``) and 1/2 (``DISCORD_SHARD``): every message that
mentions the bot, in a server of either shard and in a DM, goes to one connection and is
answered once, by the process of its shard; ``/deliberate`` is registered once, by shard
0's. One process running both shards (``0,1/2``) answers them all. Unsharded, that gateway
refuses the bot, which stops saying to shard. A bad shard is a usage error naming it."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from redis import Redis

from tests.bot.cli.process import run
from tests.bot.discord.test_run_command import environment
from tests.conftest import delete_workspace
from tests.polling import wait_for
from tests.servers.discord_api import API, BOT_ID, DiscordServer
from tests.servers.discord_gateway import INVALID_SHARD, SHARDING_REQUIRED, Gateway
from tests.servers.discord_guilds import direct_message, guild_create, guild_id, message_create
from tests.servers.http import Request, Response
from tests.team_config import team_config

SERVERS = 4
TALKER = 9  # person(9) writes to the bot directly
SHARD_OF = {n: (int(guild_id(n)) >> 22) % 2 for n in range(SERVERS)}  # Discord's formula
IDEA = "what if we used postgres"


class Addressed(DiscordServer):
    """The local REST API, reached by each process at ``/via/NAME/api/v10``: ``sent_by``
    says which process created each message, ``calls`` what each asked."""

    def __init__(self) -> None:
        super().__init__()
        self.sent_by: dict[str, str] = {}
        self.calls: list[tuple[str, str, str]] = []  # (name, method, path)

    def api_url_of(self, name: str) -> str:
        return f"{self.url}/via/{name}{API}"

    def answer(self, request: Request) -> Response:
        _, via, name, rest = [*request.path.split("/", 3), "", "", ""][:4]
        if via != "via":
            return super().answer(request)
        path = "/" + rest
        request = replace(request, path=path, params=self.params_of(request.method, path))
        answered = super().answer(request)
        with self.lock:
            self.calls.append((name, request.method, path))
            created = request.method == "POST" and path.endswith("/messages")
            if created and answered.status == 200 and isinstance(answered.json, dict):
                self.sent_by[answered.json["id"]] = name
        return answered

    def replies_to(self, said: dict[str, Any]) -> list[dict[str, Any]]:
        with self.lock:
            return [
                m
                for m in self.messages
                if str((m.get("message_reference") or {}).get("message_id")) == said["id"]
            ]


class Bot:
    """``deliberate run discord`` in a process, its log (JSON on stderr) in a file."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=out)

    def said(self, text: str) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"it exited {self.process.returncode}: {self.text()[-3000:]}")
        return text in self.text()

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        finally:
            if self.process.poll() is None:
                self.process.kill()


@pytest.fixture
def config(tmp_path: Path, workspace: str, redis_client: Redis) -> Iterator[Path]:
    """Every server served in a workspace of its own; DMs on (each in its own workspace)."""
    servers = "".join(
        f'      - id: "{guild_id(n)}"\n        workspace: {workspace}-{n}\n' for n in range(SERVERS)
    )
    tenants = f"  discord:\n    servers:\n{servers}    direct_messages: true\n"
    talker = direct_message(TALKER, IDEA)["author"]["id"]
    used = [f"{workspace}-{n}" for n in range(SERVERS)] + [f"discord-dm-{talker}"]
    for name in used:
        delete_workspace(redis_client, name)
    yield team_config(tmp_path, [], [], tenants)
    for name in used:
        delete_workspace(redis_client, name)


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    with Gateway([guild_create(n) for n in range(SERVERS)], max_guilds=2) as running:
        yield running


@pytest.fixture
def api() -> Iterator[Addressed]:
    with Addressed() as server:
        yield server


def start(
    name: str,
    api: Addressed,
    gateway: Gateway,
    config: Path,
    workspace: str,
    *args: str,
    **env: str,
) -> Bot:
    argv = [sys.executable, "-m", "bot.main", "--workspace", workspace]
    argv += ["--config", str(config), "run", "discord", *args]
    reach = api.env() | {"DISCORD_API_URL": api.api_url_of(name)}
    variables = environment(**reach, DISCORD_GATEWAY_URL=gateway.url, **env)
    return Bot(argv, variables, config.parent / f"{name}.log")


def talk(gateway: Gateway) -> dict[str, tuple[dict[str, Any], list[Any]]]:
    """A mention in every server and a DM: what was said, and the shards it went to."""
    said = {f"server {n}": message_create(n, IDEA) for n in range(SERVERS)}
    said["dm"] = direct_message(TALKER, IDEA)
    return {what: (data, gateway.dispatch("MESSAGE_CREATE", data)) for what, data in said.items()}


def test_two_replicas_each_answer_their_shards_servers_once(
    api: Addressed, gateway: Gateway, config: Path, workspace: str
) -> None:
    assert sorted(SHARD_OF.values()) == [0, 0, 1, 1]  # two servers on each shard
    bots = {
        "zero": start("zero", api, gateway, config, workspace, "--shard", "0/2"),
        "one": start("one", api, gateway, config, workspace, DISCORD_SHARD="1/2"),
    }
    try:
        wait_for(lambda: bots["zero"].said("to 2 servers (shards 0/2)"), "shard 0", 60)
        wait_for(lambda: bots["one"].said("to 2 servers (shards 1/2)"), "shard 1", 60)
        assert gateway.shards() == [(0, 2), (1, 2)]
        talked = talk(gateway)
        for what, (_, went) in talked.items():
            shard = 0 if what == "dm" else SHARD_OF[int(what.split()[1])]
            assert went == [(shard, 2)], what
        wait_for(lambda: all(api.replies_to(said) for said, _ in talked.values()), "answers", 60)
        for what, (said, went) in talked.items():
            [reply] = api.replies_to(said)
            assert api.sent_by[reply["id"]] == ("zero", "one")[went[0][0]], what
        registered = [(name, path) for name, method, path in api.calls if method == "PUT"]
        assert registered == [("zero", f"{API}/applications/{BOT_ID}/commands")]
    finally:
        codes = {name: bot.stop() for name, bot in bots.items()}
    assert codes == {"zero": 0, "one": 0}, {name: bot.text()[-2000:] for name, bot in bots.items()}


def test_one_process_runs_several_shards(
    api: Addressed, gateway: Gateway, config: Path, workspace: str
) -> None:
    bot = start("both", api, gateway, config, workspace, DISCORD_SHARD="0,1/2")
    try:
        wait_for(lambda: bot.said("to 4 servers (shards 0,1/2)"), "both shards", 90)
        assert gateway.shards() == [(0, 2), (1, 2)]
        talked = talk(gateway)
        assert sorted(went[0][0] for _, went in talked.values()) == [0, 0, 0, 1, 1]
        wait_for(lambda: all(api.replies_to(said) for said, _ in talked.values()), "answers", 60)
        for said, _ in talked.values():
            [reply] = api.replies_to(said)
            assert api.sent_by[reply["id"]] == "both"
        assert [method for _, method, _ in api.calls].count("PUT") == 1
    finally:
        code = bot.stop()
    assert code == 0, bot.text()[-2000:]


def test_unsharded_past_the_gateways_limit_it_says_to_shard(
    api: Addressed, gateway: Gateway, config: Path, workspace: str
) -> None:
    bot = start("all", api, gateway, config, workspace)
    try:
        code = bot.process.wait(timeout=60)
    finally:
        bot.stop()
    assert gateway.closed == [(None, SHARDING_REQUIRED)]
    assert code == 2
    assert "Discord requires sharding" in bot.text() and "--shard I/N" in bot.text()


@pytest.mark.parametrize("value", ["2/2", "x/2", "0/0", "1", "0,0/2"])
def test_a_bad_shard_option_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], workspace: str, value: str
) -> None:
    code, _, err = run(capsys, workspace, "run", "discord", "--shard", value)
    assert code == 2 and f"argument --shard: {value!r}" in err


@pytest.mark.parametrize("value", ["2/2", "x/2", "0/0"])
def test_a_bad_shard_variable_is_a_usage_error(workspace: str, value: str) -> None:
    argv = [sys.executable, "-m", "bot.main", "--workspace", workspace, "run", "discord"]
    env = environment(DISCORD_TOKEN="t", DISCORD_SHARD=value)
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and f"DISCORD_SHARD: {value!r}" in done.stderr


@pytest.mark.parametrize("shard", [[2, 2], [0, 0], [-1, 2], ["0", 2], [0], 3])
def test_the_gateway_closes_an_invalid_shard_as_discord_does(gateway: Gateway, shard: Any) -> None:
    async def identify() -> aiohttp.WSMessage:
        async with aiohttp.ClientSession() as session, session.ws_connect(gateway.url) as ws:
            hello = await ws.receive_json()
            assert hello["op"] == 10
            await ws.send_json({"op": 2, "d": {"token": "t", "intents": 0, "shard": shard}})
            return await ws.receive()

    closing = asyncio.run(identify())
    assert closing.type is aiohttp.WSMsgType.CLOSE and closing.data == INVALID_SHARD
    assert gateway.closed == [(shard, INVALID_SHARD)]
