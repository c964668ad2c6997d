"""A click whose commit Redis does not confirm within ``store.commit_retry_sec`` (its writes
paused for longer, as during a failover that takes its time) is told to the clicker as
``UNCONFIRMED`` ("applied once or not at all"), never as ``TROUBLE``, whose "nothing was
changed" could be false; and clicked again once Redis writes, the change is in the log once.

Redis really does not answer: a redis-server of the test's own (CLIENT PAUSE stops a whole
server) in ``CLIENT PAUSE … WRITE``, reads still answered, the commit script left waiting, the
bot's client timing out after 0.2 s and sending it again, with the same mutation id, until its
0.5 s run out. The pause starts as the commit goes out: a "Use this" click's commit goes in one
write with the click's save (its trace row and session), made only on that save
(``core/runtime/on_save.py``), so the commit waits with the save, and the clicker hears
UNCONFIRMED (the third test checks what that write held); paused before a click with no
commit to send with its save (one that only asks for an answer), the clicker hears TROUBLE's
"nothing was changed", which is then true. ``tests/bot/discord/test_unconfirmed.py`` does the
same on Discord with the helpers here."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from redis import Redis
from redis.connection import Connection
from redis.exceptions import ResponseError

from bot.app import App, build_app
from bot.chat.notices import TROUBLE, UNCONFIRMED
from bot.slack.render import escape
from core.llm.chat import ChatModel
from core.runtime.sessions import SAVE_LUA
from core.state.scripts import LuaScript, commit_script
from tests.bot.slack.conftest import config_with_roles
from tests.bot.slack.rig import SlackBot, mention
from tests.bot.slack.test_http_mode import started
from tests.model_script import proposing
from tests.openai_server import OpenAIServer
from tests.servers.redis_process import RedisProcess
from tests.servers.slack_api import SlackServer

WORKSPACE = "unconfirmed"
SOCKET_TIMEOUT_SEC, RETRY_SEC = 0.2, 0.5
PAUSE_MS = 60_000  # far past the budget; the test ends it (CLIENT UNPAUSE)


class PausedAtCommit(Redis):
    """A real client of ``server`` that, once armed, has the server pause its writes (CLIENT
    PAUSE WRITE, what Redis does during a failover) just before it sends the commit script:
    whatever the click wrote before went through; its commit waits on the server,
    unanswered. It watches what its connections send (a commit goes alone, or in one write
    after the click's save: ``core/runtime/on_save.py``), so it meets the commit however the
    client sends it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        script = commit_script(self)
        self.commit = {script.sha.encode(), script.source.encode()}  # cached, or not
        self.server: RedisProcess | None = None
        self.paused = threading.Event()  # set once the server was paused
        self.met: list[list[bytes]] = []  # the write the commit went out in, once paused
        self.followed: list[list[bytes]] = []  # the next write on its connection
        self._met_on: object = None  # (that connection)
        pool = self.connection_pool
        assert not pool._created_connections  # type: ignore[attr-defined]
        pool.connection_class = WatchedConnection
        pool.connection_kwargs["watcher"] = Watcher(self)

    def arm(self, server: RedisProcess, *, after: bool = False) -> None:
        """Pause at the next commit; ``after``: once its answer is in (the commit landed,
        whatever the click writes next waits)."""
        self.server = server
        self.after = after

    def sending(self, commands: list[list[bytes]], conn: object) -> int | None:
        """Called as ``commands`` go out on one write on ``conn``: pauses now (armed, not
        ``after``), or says which of their replies is the commit's (``after``: pause once it
        is read)."""
        if conn is self._met_on and not self.followed:
            self.followed = commands
        server = self.server
        found = [n for n, c in enumerate(commands) if len(c) > 1 and c[1] in self.commit]
        if server is None or not found:
            return None
        if self.after:
            return found[0]
        self.server = None  # once
        pause_writes(server)
        self.met, self._met_on = commands, conn
        self.paused.set()
        return None

    def answered(self, reply: Any) -> None:
        """The commit's reply read (``after``): a NOSCRIPT answer is not one (the script is
        sent whole next, still armed)."""
        server = self.server
        if server is None or isinstance(reply, ResponseError):
            return
        self.server = None  # once
        pause_writes(server)
        self.paused.set()


class Watcher:
    """The client a ``WatchedConnection`` tells (among the pool's connection arguments: its
    repr must not be the client's, whose repr shows the pool's)."""

    def __init__(self, client: PausedAtCommit) -> None:
        self.client = client

    def __repr__(self) -> str:
        return "Watcher()"


class WatchedConnection(Connection):
    """redis-py's connection, telling its ``PausedAtCommit`` what it sends and reads."""

    def __init__(self, watcher: Watcher, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.watcher = watcher.client
        self.commit_at: int | None = None  # which reply to come is the commit's
        self.replies = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        packed = command if isinstance(command, bytes) else b"".join(command)
        commit_at = self.watcher.sending(resp_commands(packed), self)
        super().send_packed_command(command, check_health)
        # (after: a connection made on the way sends its handshake through here first)
        self.commit_at, self.replies = commit_at, 0

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        at, self.replies = self.replies, self.replies + 1
        try:
            reply = super().read_response(*args, **kwargs)
        except ResponseError as error:  # (an error reply: read whole)
            self._heard(at, error)
            raise
        except BaseException:  # (not heard: still armed)
            self.commit_at = None if at == self.commit_at else self.commit_at
            raise
        self._heard(at, reply)
        return reply

    def _heard(self, at: int, reply: Any) -> None:
        if at == self.commit_at:
            self.commit_at = None
            self.watcher.answered(reply)


def resp_commands(packed: bytes) -> list[list[bytes]]:
    """The commands of one write in RESP (arrays of bulk strings, as clients send them)."""
    commands, at = [], 0
    while at < len(packed):
        end = packed.index(b"\r\n", at)
        count, at = int(packed[at + 1 : end]), end + 2
        parts = []
        for _ in range(count):
            end = packed.index(b"\r\n", at)
            size = int(packed[at + 1 : end])
            parts.append(packed[end + 2 : end + 2 + size])
            at = end + 2 + size + 2
        commands.append(parts)
    return commands


def retrying_briefly(config: Path, seconds: float = RETRY_SEC) -> Path:
    """``config`` with a commit sent again for ``seconds`` rather than 30 s."""
    text = config.read_text(encoding="utf-8")
    shipped = "commit_retry_sec: 30 "
    assert text.count(shipped) == 1, "the shipped config's commit_retry_sec moved"
    config.write_text(text.replace(shipped, f"commit_retry_sec: {seconds} "), encoding="utf-8")
    return config


def paused_app(
    server: RedisProcess, config: Path, retry_sec: float = RETRY_SEC
) -> tuple[App, PausedAtCommit]:
    """The team's app on ``server``, through a client built from a URL as the bot builds its
    own (``?socket_timeout=0.2``, no retries of redis-py's), which can be armed."""
    url = f"{server.url}?socket_timeout={SOCKET_TIMEOUT_SEC}"
    client = PausedAtCommit.from_url(url, decode_responses=True)  # as the bot's connect(url)
    assert isinstance(client, PausedAtCommit)
    app = build_app(WORKSPACE, retrying_briefly(config, retry_sec), client=client)
    assert app.store.durability.retry_sec == retry_sec
    return app, client


def pause_writes(server: RedisProcess) -> None:
    """What a failover does to the old primary: reads answered, writes (scripts too) held."""
    server.client.execute_command("CLIENT", "PAUSE", PAUSE_MS, "WRITE")  # type: ignore[no-untyped-call]


def unpause(server: RedisProcess) -> None:
    server.client.execute_command("CLIENT", "UNPAUSE")  # type: ignore[no-untyped-call]


@pytest.fixture
def paused_bot(
    own_redis: RedisProcess, slack_api: SlackServer, tmp_path: Path
) -> Iterator[tuple[SlackBot, PausedAtCommit]]:
    app, client = paused_app(own_redis, config_with_roles(tmp_path, WORKSPACE))
    bot = SlackBot(app, slack_api).start()
    yield bot, client
    unpause(own_redis)  # (a failed test's pause must not hold the listeners' last writes)
    bot.stop()


def test_writes_paused_before_a_click_with_no_commit_fail_it_as_trouble(
    paused_bot: tuple[SlackBot, PausedAtCommit], own_redis: RedisProcess
) -> None:
    """A click that commits nothing ("Try another angle": an answer, asked of the responder
    once the click is saved) times out on its save: TROUBLE's "nothing was changed" is the
    truth."""
    bot, _ = paused_bot
    _, reply = started(bot)
    pause_writes(own_redis)
    bot.click(reply, "AlternativeCurrent")
    [notice] = bot.ephemerals()
    assert notice["text"] == escape(TROUBLE)
    unpause(own_redis)


def test_a_click_cut_off_before_its_commit_is_handled_again_and_commits_once(
    own_redis: RedisProcess, slack_api: SlackServer, tmp_path: Path
) -> None:
    """Writes paused for less than the budget (a failover quicker than it) before the click:
    its first writes time out, the runtime handles the same click again (a click is known by
    its id), and it commits once; the clicker sees the closed message, no notice at all."""
    app, _ = paused_app(own_redis, config_with_roles(tmp_path, WORKSPACE), retry_sec=20)
    bot = SlackBot(app, slack_api).start()
    try:
        _, reply = started(bot)
        own_redis.client.execute_command("CLIENT", "PAUSE", 600, "WRITE")  # Redis ends it
        bot.click(reply, "ConfirmCurrent")
        bot.listeners.idle()
        [record] = bot.app.log.latest(5)
        assert record.mutation.key.startswith("decision.")
        assert bot.slack.ephemerals == []  # neither TROUBLE nor UNCONFIRMED
        assert bot.slack.updates  # the message closed with its line
    finally:
        unpause(own_redis)
        bot.stop()


def test_a_click_redis_does_not_confirm_is_told_so_and_lands_once_when_sent_again(
    paused_bot: tuple[SlackBot, PausedAtCommit], own_redis: RedisProcess
) -> None:
    bot, client = paused_bot
    _, reply = started(bot)
    client.arm(own_redis)
    bot.click(reply, "ConfirmCurrent")
    [notice] = bot.ephemerals()
    # the commit met the pause, the click's save before it; the save of what it came to
    # (foreseen, made only on it) behind it, on the same connection, in a write of its own
    # (made while they were on their way)
    assert client.paused.is_set()
    save = LuaScript(client, SAVE_LUA).sha.encode()
    assert [c[1] for c in client.met] == [save, commit_script(client).sha.encode()]
    assert [c[1] for c in client.followed] == [save]
    assert notice["user"] == "U0ALICE" and notice["text"] == escape(UNCONFIRMED)
    bot.listeners.idle()
    assert len(bot.slack.ephemerals) == 1  # UNCONFIRMED alone: no TROUBLE as well
    assert bot.slack.updates == []  # nor a closing line for what may not have happened
    unpause(own_redis)
    assert len(bot.app.log) <= 1
    bot.click(reply, "ConfirmCurrent", user="U0BOB")  # once Redis writes: the same mutation
    bot.listeners.idle()
    [record] = bot.app.log.latest(5)
    assert record.mutation.key.startswith("decision.")


def test_a_click_cut_off_right_after_its_commit_is_told_unconfirmed_never_unchanged(
    paused_bot: tuple[SlackBot, PausedAtCommit], own_redis: RedisProcess
) -> None:
    """The commit lands; whatever the click writes after it waits past the budget (here the
    save of what it came to: the server forgot the commit script, which is sent whole after
    the save foreseen, which then found no record): the clicker hears UNCONFIRMED, never
    TROUBLE's "nothing was changed", which would be false, and the log holds the commit
    once."""
    bot, client = paused_bot
    _, reply = started(bot)
    own_redis.client.script_flush()
    own_redis.client.script_load(SAVE_LUA)
    client.arm(own_redis, after=True)
    bot.click(reply, "ConfirmCurrent")
    [notice] = bot.ephemerals()
    assert client.paused.is_set() and notice["text"] == escape(UNCONFIRMED)
    unpause(own_redis)
    [record] = bot.app.log.latest(5)
    assert record.mutation.key.startswith("decision.")


def test_a_proposal_apply_redis_does_not_confirm_is_not_called_a_refusal(
    own_redis: RedisProcess, slack_api: SlackServer, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    """An agent's proposal applied by a moderator while Redis holds the commit: UNCONFIRMED,
    not "Not done" as if policy had refused it. The claim could not be handed back while
    Redis held its writes, so a second click at once is told someone is applying it (the
    claim lapses by itself, and then the same mutation id is sent again): never twice."""
    app, client = paused_app(own_redis, config_with_roles(tmp_path, WORKSPACE))
    openai_server.answer_with = proposing("stream.state", "off")
    model = openai.OpenAI(api_key="k", base_url=openai_server.base_url, max_retries=0)
    bot = SlackBot(app, slack_api, ChatModel(model, "m", timeout_sec=5)).start()
    try:
        bot.event(mention("end the stream"))
        [reply] = bot.replies()
        client.arm(own_redis)
        bot.click(reply, "ApplyProposal", user="U0MIA")  # a moderator by user group
        [notice] = bot.ephemerals()
        assert client.paused.is_set() and notice["text"] == escape(UNCONFIRMED)
        unpause(own_redis)
        bot.click(reply, "ApplyProposal", user="U0MIA")
        [_, again] = bot.ephemerals(2)
        assert "is applying this proposal right now" in again["text"]
        assert len(app.log) <= 1
    finally:
        unpause(own_redis)
        bot.stop()
