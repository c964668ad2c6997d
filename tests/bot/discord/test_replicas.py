"""Two replicas of the Discord bot (two processes' worth: each its own client, app,
``Workspaces``, adapter, discord.py client and event loop, on one Redis and one Discord) each
get one of two clicks on the same public message at the same time, and commit both: the
message ends up showing both clicks' lines, whichever replica's edit lands last, because the
replicas take turns under the message's Redis lock (``ClickLines.lock``).

The race is staged, not hoped for. Discord is slow to take the edit that shows a single
closing line (the first click's), and holds it until the other replica has either tried the
message's lock (seen by the server's MONITOR: it waits its turn) or had its own edit taken.
With a lock per process (an ``asyncio.Lock`` per message, as the adapter had before), the
second is what happens: the other replica, not held by anything, adds its line to the list
in Redis (two lines), edits the message with both, and then the held edit with the first line
alone lands over it: the second click's line is lost, which the last assertion catches. Under
the Redis lock, the first replica holds the lock until its edit is taken, the other then adds
its line and edits last, with both."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from redis import Redis
from redis.exceptions import RedisError

from bot.app import App, build_app
from bot.discord.render import CLOSED
from bot.discord.turns import PLATFORM
from bot.proposals.click_lines import ClickLines
from tests.bot.discord import payloads
from tests.bot.discord.conftest import server_tenants
from tests.bot.discord.payloads import ALICE, CHANNEL, CREW, SAM
from tests.bot.discord.rig import DiscordBot
from tests.bot.discord.test_clicks import IDEA, closing_lines, given_button, started
from tests.polling import wait_for
from tests.servers.discord_api import DiscordServer
from tests.servers.http import Request, Response
from tests.servers.redis_process import RedisProcess
from tests.team_config import team_config

WORKSPACE = "replicas"


class SlowToTakeOneLine(DiscordServer):
    """Discord, slow to take the first edit of a clicked message that shows one closing
    line: once ``hold_until`` is given, that edit waits until it says so."""

    def __init__(self) -> None:
        super().__init__()
        self.held = threading.Event()
        self._until: Callable[[], Any] | None = None
        self._guard = threading.Lock()

    def hold_until(self, until: Callable[[], Any]) -> None:
        self._until = until

    def answer(self, request: Request) -> Response:
        if _lines_shown(request) == 1:
            with self._guard:
                until, self._until = self._until, None
            if until is not None:
                self.held.set()
                wait_for(until, "the other replica's turn", timeout=20)
        return super().answer(request)


def _lines_shown(request: Request) -> int:
    """How many closing lines an edit of a clicked message shows (0: not such an edit)."""
    body = request.json
    edit = request.method == "PATCH" and request.path.endswith("/messages/@original")
    if not (edit and isinstance(body, dict) and CLOSED in str(body.get("content") or "")):
        return 0
    return len(closing_lines(body))


class LockTries:
    """The tokens of every attempt to take ``key`` (``SET key token NX PX …``), as the
    server's MONITOR tells them."""

    def __init__(self, server: RedisProcess, key: str) -> None:
        self.server, self.key = server, key
        self.tokens: set[str] = set()
        self._stop = threading.Event()
        self._client = Redis(port=server.port, decode_responses=True)
        # MONITOR is on once this returns
        self._monitor = self._client.monitor().__enter__()  # type: ignore[no-untyped-call]
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.is_set():
            try:
                seen = self._monitor.next_command()
            except (RedisError, OSError):
                return
            words = str(seen["command"]).split(" ")
            if len(words) > 2 and words[0].upper() == "SET" and words[1] == self.key:
                self.tokens.add(words[2])

    def close(self) -> None:
        self._stop.set()
        self.server.client.ping()  # MONITOR's next line wakes the watcher, which stops
        self._thread.join(timeout=10)
        self._monitor.__exit__()
        self._client.close()


@pytest.fixture
def slow_api() -> Iterator[SlowToTakeOneLine]:
    with SlowToTakeOneLine() as server:
        yield server


def replica(server: RedisProcess, config: Path) -> App:
    """One replica's app, as its process builds it: a client of its own from the URL."""
    return build_app(WORKSPACE, config, redis_url=server.url)


@pytest.fixture
def replicas(
    own_redis: RedisProcess, slow_api: SlowToTakeOneLine, tmp_path: Path
) -> Iterator[tuple[DiscordBot, DiscordBot]]:
    config = team_config(tmp_path, [], [f"discord:{CREW}"], server_tenants(WORKSPACE))
    one = DiscordBot(replica(own_redis, config), slow_api)
    two = DiscordBot(replica(own_redis, config), slow_api)
    yield one, two
    two.close()  # (the other way round: each puts back the API address it found)
    one.close()


def test_two_replicas_clicking_one_message_at_once_both_show(
    replicas: tuple[DiscordBot, DiscordBot], slow_api: SlowToTakeOneLine, own_redis: RedisProcess
) -> None:
    one, two = replicas
    assert one.app.redis is not two.app.redis and one.adapter is not two.adapter
    reply = given_button(one, started(one), "Shout")  # two buttons, each committing
    app = one.app
    ref = f"{CHANNEL}:{reply['id']}"
    lock = ClickLines(app.redis, WORKSPACE, app.config.sessions.ttl_sec).lock(PLATFORM, ref)
    tries = LockTries(own_redis, str(lock.name))
    try:
        slow_api.hold_until(
            lambda: len(tries.tokens) >= 2 or slow_api.message(reply["id"]).get("edits")
        )
        confirm = payloads.component(reply, payloads.custom_id_of(reply, "ConfirmCurrent"), SAM)
        shout = payloads.component(reply, payloads.custom_id_of(reply, "Shout"), ALICE)
        clicks = [(one, one.interaction(confirm)), (two, two.interaction(shout))]
        with ThreadPoolExecutor(max_workers=2) as pool:  # each replica's loop in its thread
            handled = [pool.submit(bot.dispatch, click) for bot, click in clicks]
            for each in handled:
                each.result()
    finally:
        tries.close()
    assert slow_api.held.is_set()  # the race was run: one edit waited for the other replica
    records = app.log.latest(5)
    assert sorted((r.mutation.key.split(".")[0], r.mutation.actor.id) for r in records) == [
        ("decision", SAM),
        ("shout", ALICE),
    ]
    decision = next(r.mutation.key for r in records if r.mutation.key != "shout.last")
    closed = slow_api.message(reply["id"])
    assert closed["edits"] == 2
    assert sorted(closing_lines(closed)) == sorted(
        [
            f'✅ Committed: set {decision} "{IDEA}" (v1) — by <@{SAM}>',
            f'✅ Committed: set shout.last "{IDEA}" (v1) — by <@{ALICE}>',
        ]
    )
