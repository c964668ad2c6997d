"""Scripts sent on a wire (``core.redis.wire``): the same bytes redis-py would send, the same
answers, NOSCRIPT and a connection closed while idle handled as redis-py handles them, and
no wire where a client's commands must go through redis-py."""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis import BlockingConnectionPool, ConnectionPool, Redis
from redis._parsers.encoders import Encoder
from redis.backoff import NoBackoff
from redis.connection import PythonRespSerializer
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import DataError, ResponseError
from redis.retry import Retry

from core.redis.wire import POOL_SHARE, packed, wire_of
from core.state.scripts import LuaScript, ScriptCall, together
from tests.polling import wait_for
from tests.servers.redis_process import RedisProcess

ECHO = "return {KEYS[1], ARGV[1], ARGV[2]}"
COUNT = "return redis.call('INCR', KEYS[1] .. ':count')"

arguments = st.one_of(
    st.text(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.binary(),
)


def redis_py_packed(command: tuple[Any, ...]) -> bytes:
    packer = PythonRespSerializer(6000, Encoder("utf-8", "strict", False).encode)
    return b"".join(packer.pack(*command))  # type: ignore[no-untyped-call]


@given(st.lists(arguments, min_size=1, max_size=30))
def test_a_command_is_packed_as_redis_py_packs_it(parts: list[Any]) -> None:
    command = ("EVALSHA", *parts)
    assert packed(command) == redis_py_packed(command)


@pytest.mark.parametrize("bad", [None, True])
def test_what_redis_py_refuses_to_send_is_refused(bad: object) -> None:
    with pytest.raises(DataError):
        packed(("EVALSHA", "x", 1, bad))


def test_a_script_on_the_wire_answers_as_through_redis_py(server_redis: Redis) -> None:
    script = LuaScript(server_redis, ECHO)
    assert script._wire is not None
    through_redis_py = server_redis.eval(ECHO, 1, "k", "ü", 7)
    assert script(["k"], ["ü", 7]) == through_redis_py == ["k", "ü", "7"]


def test_a_script_the_server_forgot_is_sent_whole_and_cached_again(
    own_redis: RedisProcess,
) -> None:
    client = Redis.from_url(own_redis.url, decode_responses=True)
    script = LuaScript(client, ECHO)
    assert script(["a"], [1, 2]) == ["a", "1", "2"]
    client.script_flush()
    assert client.script_exists(script.sha) == [False]
    assert script(["b"], [3, 4]) == ["b", "3", "4"]
    assert client.script_exists(script.sha) == [True]
    client.close()


def test_a_connection_the_server_closed_while_idle_is_connected_again(
    own_redis: RedisProcess,
) -> None:
    """The client's connections retry nothing (redis-py's default for a URL's pool): the
    call after the kill answers all the same, as through redis-py's pool."""
    client = Redis.from_url(own_redis.url, decode_responses=True)
    admin = Redis.from_url(own_redis.url, decode_responses=True)
    script = LuaScript(client, ECHO)
    assert script(["a"], [1, 2]) == ["a", "1", "2"]
    assert admin.client_kill_filter(_type="normal", skipme=True) >= 1
    assert script(["b"], [3, 4]) == ["b", "3", "4"]
    client.close()
    admin.close()


def test_calls_from_many_threads_each_get_their_own_answer(server_redis: Redis) -> None:
    script = LuaScript(server_redis, ECHO)
    wrong: list[object] = []

    def calls(thread: int) -> None:
        for n in range(200):
            reply = script([f"k{thread}"], [thread, n])
            if reply != [f"k{thread}", str(thread), str(n)]:
                wrong.append(reply)

    threads = [threading.Thread(target=calls, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


class Counting(Redis):
    def execute_command(self, *args: Any, **options: Any) -> Any:
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]


def test_no_wire_where_redis_py_must_see_the_commands(server_redis: Redis) -> None:
    pool = server_redis.connection_pool
    assert wire_of(server_redis) is wire_of(Redis(connection_pool=pool)) is not None
    assert wire_of(Counting(connection_pool=pool)) is None  # a wrapped execute_command
    kwargs = dict(pool.connection_kwargs)
    blocking = Redis(connection_pool=BlockingConnectionPool(**kwargs))
    assert wire_of(blocking) is None
    single = Redis(connection_pool=pool, single_connection_client=True)
    assert wire_of(single) is None
    single.close()


@pytest.mark.parametrize("cap", [1, 2, 9, 40])
def test_the_wire_leaves_a_capped_pool_its_connections(server_redis: Redis, cap: int) -> None:
    """A pool capped by ``max_connections`` (in ``REDIS_URL`` too) still serves the client's
    other commands after scripts went on its wire: the wire keeps at most an eighth of the
    cap between calls (none below 8), and the rest serve as many threads at once."""
    kwargs = dict(server_redis.connection_pool.connection_kwargs)
    client = Redis(connection_pool=ConnectionPool(max_connections=cap, **kwargs))
    script = LuaScript(client, "return redis.call('PING')")
    errors: list[BaseException] = []

    def both() -> None:
        try:
            assert script([], []) in ("PONG", b"PONG")
            assert client.ping()
        except BaseException as error:
            errors.append(error)

    for _ in range(3):  # one after another: what the wire kept must not starve the pool
        both()
    threads = [threading.Thread(target=both) for _ in range(cap - cap // POOL_SHARE)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    client.close()


def test_a_script_sent_is_answered_when_its_reply_is_read(server_redis: Redis) -> None:
    """``send`` returns before the reply is read: other calls go on meanwhile (on other
    connections), the reply read later is the script's own, and its connection serves on."""
    script = LuaScript(server_redis, ECHO)
    sent = script.send(["a"], [1, "ü"])
    assert script(["b"], [2, 3]) == ["b", "2", "3"]  # (while the first is on its way)
    later = script.send(["c"], [4, 5])
    assert later.reply() == ["c", "4", "5"]
    assert sent.reply() == ["a", "1", "ü"]
    with pytest.raises(DataError, match="read already"):
        sent.reply()
    assert script(["d"], [6, 7]) == ["d", "6", "7"]


def test_an_error_reply_read_later_is_raised_and_the_connection_serves_on(
    server_redis: Redis,
) -> None:
    script = LuaScript(server_redis, "return redis.error_reply('WRONGTYPE not a list')")
    wire = wire_of(server_redis)
    assert wire is not None
    sent = script.send([], [])
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        sent.reply()
    assert LuaScript(server_redis, ECHO)(["a"], [1, 2]) == ["a", "1", "2"]


@pytest.mark.parametrize("cap", [1, 7])
def test_on_a_pool_capped_low_a_script_sent_is_answered_at_once(
    server_redis: Redis, cap: int
) -> None:
    """Under ``POOL_SHARE`` connections, none waits for its reply: the pool's other commands
    (another thread's, a metrics flush) still find one while the caller goes on."""
    kwargs = dict(server_redis.connection_pool.connection_kwargs)
    client = Redis(connection_pool=ConnectionPool(max_connections=cap, **kwargs))
    script = LuaScript(client, ECHO)
    sent = [script.send([f"k{n}"], [n, "x"]) for n in range(cap)]
    assert client.ping()  # (a connection free for it)
    assert [s.reply() for s in sent] == [[f"k{n}", str(n), "x"] for n in range(cap)]
    client.close()


def test_a_script_sent_that_the_server_forgot_is_sent_whole(own_redis: RedisProcess) -> None:
    client = Redis.from_url(own_redis.url, decode_responses=True)
    script = LuaScript(client, ECHO)
    client.script_flush()
    assert script.send(["a"], [1, 2]).reply() == ["a", "1", "2"]
    assert client.script_exists(script.sha) == [True]
    client.close()


def test_a_reply_cut_off_on_its_way_raises_and_the_next_call_connects_again(
    own_redis: RedisProcess,
) -> None:
    """The server kills the connection before the reply is read: reading it raises a
    connection error (whether the script ran is not known: the caller sends it again), and
    the next call connects again."""
    client = Redis.from_url(own_redis.url, decode_responses=True)
    admin = Redis.from_url(own_redis.url, decode_responses=True)
    script = LuaScript(client, "redis.call('SET', KEYS[1], ARGV[1]) return 'done'")
    assert script(["k"], ["u"]) == "done"  # (known to the server: sent by its SHA, it runs)
    sent = script.send(["k"], ["v"])
    wait_for(lambda: admin.get("k") == "v", "the script to run")
    assert admin.client_kill_filter(_type="normal", skipme=True) >= 1
    # (the reply may have reached the socket before the kill: then it is read whole)
    with contextlib.suppress(RedisConnectionError):
        assert sent.reply() == "done"
    assert script(["k"], ["w"]) == "done" and admin.get("k") == "w"
    client.close()
    admin.close()


def test_scripts_sent_together_on_the_wire_answer_as_through_redis_py(server_redis: Redis) -> None:
    """``together`` on one server sends its scripts in one write on the wire; a client whose
    commands redis-py must see sends them in a redis-py pipeline: the same replies, in order."""
    echo, count = LuaScript(server_redis, ECHO), LuaScript(server_redis, COUNT)
    key = f"together-{os.urandom(4).hex()}"
    calls = [ScriptCall(echo, [key], ["ü", 1]), ScriptCall(count, [key], [])]
    assert echo._wire is not None
    assert together(server_redis, calls) == [[key, "ü", "1"], 1]
    wrapped = Counting(connection_pool=server_redis.connection_pool)
    assert wire_of(wrapped) is None
    through = [ScriptCall(LuaScript(wrapped, ECHO), [key], ["ü", 1])]
    through.append(ScriptCall(LuaScript(wrapped, COUNT), [key], []))
    assert together(wrapped, through) == [[key, "ü", "1"], 2]
    server_redis.delete(f"{key}:count")


def test_an_error_reply_among_calls_sent_together_stands_in_its_place(
    server_redis: Redis,
) -> None:
    """On the wire, as in a redis-py pipeline: every call runs, an error reply is given
    back in its place, and the connection serves on; ``together`` raises it."""
    wire = wire_of(server_redis)
    assert wire is not None
    key = f"together-{os.urandom(4).hex()}"
    replies = wire.call_all([("SET", key, "v"), ("LPUSH", key, "x"), ("GET", key)])
    assert replies[0] is True or replies[0] in ("OK", b"OK")
    assert isinstance(replies[1], ResponseError) and "WRONGTYPE" in str(replies[1])
    assert replies[2] in ("v", b"v")
    failing = LuaScript(server_redis, "return redis.error_reply('WRONGTYPE not a list')")
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        together(server_redis, [ScriptCall(failing, [key], []), ScriptCall(failing, [key], [])])
    assert LuaScript(server_redis, ECHO)([key], [1, 2]) == [key, "1", "2"]
    server_redis.delete(key)


def test_scripts_sent_together_that_the_server_forgot_are_sent_whole(
    own_redis: RedisProcess,
) -> None:
    client = Redis.from_url(own_redis.url, decode_responses=True)
    echo, count = LuaScript(client, ECHO), LuaScript(client, COUNT)
    assert together(client, [ScriptCall(echo, ["k"], [1, 2]), ScriptCall(count, ["k"], [])]) == [
        ["k", "1", "2"],
        1,
    ]
    client.script_flush()
    assert together(client, [ScriptCall(count, ["k"], []), ScriptCall(echo, ["k"], [3, 4])]) == [
        2,
        ["k", "3", "4"],
    ]
    assert client.script_exists(echo.sha, count.sha) == [True, True]
    client.close()


def test_what_follows_is_made_while_the_first_are_on_their_way(server_redis: Redis) -> None:
    """``call_all``'s ``more`` is asked once the first commands are sent: another client
    sees them run before it answers; what it answers goes behind them on the same
    connection, their replies after the first's, in one exchange."""
    wire = wire_of(server_redis)
    assert wire is not None
    key = f"then-{os.urandom(4).hex()}"
    watcher = Redis(
        connection_pool=ConnectionPool(**server_redis.connection_pool.connection_kwargs)
    )
    asked: list[str] = []

    def more() -> list[tuple[Any, ...]]:
        wait_for(lambda: watcher.get(key) is not None, "the first write to run")
        asked.append("asked")
        return [("INCR", key), ("GET", key)]

    replies = wire.call_all([("SET", key, "1"), ("INCR", key)], more)
    assert [_text(r) for r in replies] == ["OK", 2, 3, "3"]
    assert asked == ["asked"]
    assert [_text(r) for r in wire.call_all([("GET", key)], list)] == ["3"]  # (none follow)
    watcher.close()
    server_redis.delete(key)


def test_what_follows_is_asked_once_when_the_exchange_is_made_again(
    own_redis: RedisProcess,
) -> None:
    """The connection cut off after the second write (its replies lost): the retry sends
    both again, the same commands, and does not ask ``more`` again."""
    client = Redis.from_url(own_redis.url, decode_responses=True, retry=Retry(NoBackoff(), 1))
    admin = Redis.from_url(own_redis.url, decode_responses=True)
    wire = wire_of(client)
    assert wire is not None
    asked: list[int] = []

    def more() -> list[tuple[Any, ...]]:
        asked.append(1)
        # (this connection killed once its first write ran: the second write or the
        # reading fails, and the retry makes the whole exchange again)
        if len(asked) == 1:
            wait_for(lambda: admin.get("k") == "1", "the first write to run")
            admin.client_kill_filter(_type="normal", skipme=True)
        return [("INCR", "n")]

    replies = wire.call_all([("INCR", "k")], more)
    assert asked == [1]
    # the first write ran twice (made again whole, as ``call_all`` says), the second once
    assert replies == [2, 1] and admin.get("k") == "2" and admin.get("n") == "1"
    client.close()
    admin.close()


def test_when_what_follows_fails_the_first_replies_are_read_and_it_is_raised(
    server_redis: Redis,
) -> None:
    """The first commands ran; ``more`` raises: its error is what the caller hears, the
    first replies are read off the connection, and the next call gets its own reply."""
    wire = wire_of(server_redis)
    assert wire is not None
    key = f"then-{os.urandom(4).hex()}"

    def more() -> list[tuple[Any, ...]]:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        wire.call_all([("SET", key, "v"), ("GET", key)], more)
    assert _text(server_redis.get(key)) == "v"
    for _ in range(3):  # (whichever connection the wire hands out next: no stray reply)
        assert [_text(r) for r in wire.call_all([("ECHO", "mine")])] == ["mine"]
    server_redis.delete(key)


def test_scripts_that_follow_go_behind_the_first_wherever_they_are_sent(
    server_redis: Redis,
) -> None:
    """``together``'s ``then``: on the wire, asked once the first are on their way; where
    redis-py must see the commands, asked first and sent with them; the same replies, in
    order, either way."""
    echo, count = LuaScript(server_redis, ECHO), LuaScript(server_redis, COUNT)
    key = f"together-{os.urandom(4).hex()}"
    first = [ScriptCall(echo, [key], ["ü", 1]), ScriptCall(count, [key], [])]
    asked: list[int] = []

    def then() -> list[ScriptCall]:
        asked.append(1)
        return [ScriptCall(count, [key], [])]

    assert together(server_redis, first, then) == [[key, "ü", "1"], 1, 2]
    assert together(server_redis, first, list) == [[key, "ü", "1"], 3]
    wrapped = Counting(connection_pool=server_redis.connection_pool)
    through = [ScriptCall(LuaScript(wrapped, ECHO), [key], ["ü", 1])]
    assert together(wrapped, through, then) == [[key, "ü", "1"], 4]
    assert asked == [1, 1]
    server_redis.delete(f"{key}:count")


def _text(reply: Any) -> Any:
    """A reply as text (the suite's client may or may not decode), OK for True."""
    if reply is True:
        return "OK"
    return reply.decode() if isinstance(reply, bytes) else reply


def test_what_follows_that_cannot_be_sent_leaves_no_reply_behind(server_redis: Redis) -> None:
    """``more`` answers a command redis-py would refuse to send (a None): the error is
    raised, the first ran, and the next calls on the wire and on the pool each get their
    own reply, never one left on a connection handed back."""
    wire = wire_of(server_redis)
    assert wire is not None
    key = f"then-{os.urandom(4).hex()}"
    with pytest.raises(DataError):
        wire.call_all([("SET", key, "v"), ("ECHO", "stale")], lambda: [("ECHO", None)])
    for n in range(3):
        assert [_text(r) for r in wire.call_all([("ECHO", f"mine-{n}")])] == [f"mine-{n}"]
        assert _text(server_redis.echo(f"pool-{n}")) == f"pool-{n}"
    server_redis.delete(key)
