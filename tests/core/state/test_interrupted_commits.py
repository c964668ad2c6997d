"""A commit cut off on its way (a server's death, a failover, a lost reply) is sent again
with the same mutation id for ``store.commit_retry_sec``: applied once, whichever side of
the cut it landed on; past the budget the caller hears it in one sentence. Through a TCP
proxy in front of one real server, and with a real server pausing its writes (what Redis
itself does during a manual failover)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from redis import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from core.state.commit_result import Committed, Rejected
from core.state.keys import WorkspaceKeys
from core.state.limits import CommitUnconfirmed, Durability
from core.state.store import StateStore
from tests.bot.cli.process import run
from tests.conftest import write_config
from tests.factories import mutation
from tests.polling import wait_for
from tests.servers.redis_process import RedisProcess
from tests.servers.tcp_proxy import RedisProxy

PAUSED = """
store:
  commit_retry_sec: 0.5
policy:
  keys:
    - pattern: "decision.*"
"""


@pytest.fixture
def proxy(server_redis: Redis) -> Iterator[RedisProxy]:
    with RedisProxy(server_redis) as proxy:
        yield proxy


def committing(store: StateStore, change: object) -> tuple[threading.Thread, list[object]]:
    """``store.commit(change)`` in a thread; its outcome or error lands in the list."""
    landed: list[object] = []

    def commit() -> None:
        try:
            landed.append(store.commit(change))  # type: ignore[arg-type]
        except Exception as error:
            landed.append(error)

    thread = threading.Thread(target=commit)
    thread.start()
    return thread, landed


@pytest.mark.parametrize("retries", [0, 3], ids=["by the store", "inside the client"])
def test_a_commit_whose_reply_was_lost_is_sent_again_and_applied_once(
    server_redis: Redis, workspace: str, proxy: RedisProxy, retries: int
) -> None:
    """Sent again by the store's own loop, or by redis-py's ``Retry`` inside the client
    (unseen by the store: the embedded client's, and redis-py's default for a client it
    builds): either way the second run finds the first's record, made by this request,
    and tells it as this commit."""
    client = proxy.client(retry=Retry(NoBackoff(), retries))
    store = StateStore(client, workspace, durability=Durability(retry_sec=30))
    assert isinstance(store.commit(mutation("set", "decision.db", "x")), Committed)  # loaded
    change = mutation("incr", "counter.n", 5)
    # the script runs on the server; its answer never reaches the committer
    done = proxy.answer_lost(
        partial(store.commit, change),
        lambda: server_redis.hget(store.keys.versions, "counter.n") == "1",
        "the commit",
    )
    assert isinstance(done, Committed), done
    # the first run's result, told as what it is: this commit (not a repeat of another)
    assert not done.duplicate and done.version == 1
    assert server_redis.xlen(store.keys.log) == 2
    assert server_redis.hget(store.keys.entry("counter.n"), "value") == "5"


def test_a_commit_that_never_reached_the_server_is_sent_when_it_answers_again(
    server_redis: Redis, workspace: str, proxy: RedisProxy
) -> None:
    store = StateStore(proxy.client(), workspace, durability=Durability(retry_sec=30))
    assert store.version("decision.db") == 0  # connected: the next command is the commit
    proxy.cut()
    thread, landed = committing(store, mutation("set", "decision.db", "postgres"))
    wait_for(lambda: proxy.refused >= 2 or not thread.is_alive(), "attempts refused")
    proxy.restore()
    thread.join(timeout=30)
    [done] = landed
    assert isinstance(done, Committed) and not done.duplicate and done.version == 1
    assert server_redis.xlen(store.keys.log) == 1


def test_past_its_budget_an_unanswered_commit_is_reported_unconfirmed_in_one_sentence(
    server_redis: Redis, workspace: str, proxy: RedisProxy
) -> None:
    store = StateStore(proxy.client(), workspace, durability=Durability(retry_sec=0.3))
    change = mutation("set", "decision.db", "postgres")
    proxy.cut()
    with pytest.raises(CommitUnconfirmed) as unconfirmed:
        store.commit(change)
    said = str(unconfirmed.value)
    assert said.startswith("decision.db: Redis did not confirm the change within 0.3 s (")
    assert change.id in said and "\n" not in said
    assert server_redis.exists(store.keys.log) == 0  # and it was indeed not applied
    proxy.restore()
    again = store.commit(change)  # the same change, sent again by its author: once
    assert isinstance(again, Committed) and again.version == 1


def test_a_rejection_is_an_answer_not_an_interruption(
    server_redis: Redis, workspace: str, proxy: RedisProxy
) -> None:
    store = StateStore(proxy.client(), workspace, durability=Durability(retry_sec=30))
    refused = store.commit(mutation("set", "decision.db", "x", expected_version=3))
    assert isinstance(refused, Rejected) and server_redis.exists(store.keys.log) == 0


def test_the_cli_says_a_commit_held_past_its_budget_is_unconfirmed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server pauses its writes (CLIENT PAUSE, as Redis does during a failover) for
    longer than the budget: the CLI says so in one line, exit 1, naming the mutation id;
    sent again with that id once the server writes again, the change is in the log once."""
    server = RedisProcess(tmp_path / "paused")
    log = WorkspaceKeys("paused").log
    try:
        config = write_config(tmp_path, PAUSED)
        url = f"{server.url}?socket_timeout=0.2"
        argv = ("--config", str(config), "--redis-url", url, "state", "set", "decision.db")
        argv += ("postgres", "--actor", "user:alice", "--id", "m-paused")
        # the workspace's first use (its log, the rules' cursor on it) is done beforehand
        first = ("--config", str(config), "--redis-url", url, "state", "set", "decision.cache")
        code, _, err = run(capsys, "paused", *first, "redis", "--actor", "user:alice")
        assert code == 0, err
        server.client.execute_command("CLIENT", "PAUSE", 60_000, "WRITE")
        code, out, err = run(capsys, "paused", *argv)
        assert code == 1 and out == "", (code, out, err)
        [line] = err.strip().splitlines()
        assert line.startswith("deliberate: decision.db: Redis did not confirm the change")
        assert "m-paused" in line
        server.client.execute_command("CLIENT", "UNPAUSE")
        code, out, err = run(capsys, "paused", *argv)
        assert code == 0, err
        assert server.client.xlen(log) == 2  # landed once, whichever attempt it was
        assert server.client.hget(WorkspaceKeys("paused").entry("decision.db"), "value") == (
            '"postgres"'
        )
    finally:
        server.stop()
