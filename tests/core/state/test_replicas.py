"""``store.replicas.wait_for``: a commit is acknowledged once that many replicas hold it."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from functools import partial
from importlib.resources import files
from pathlib import Path

import pytest
from redis.exceptions import ResponseError

from core.state.commit_result import Committed
from core.state.limits import Durability, NotReplicated
from core.state.store import StateStore
from tests.bot.cli.process import run
from tests.factories import mutation
from tests.servers.redis_process import RedisProcess
from tests.servers.tcp_proxy import RedisProxy


@pytest.fixture
def primary_and_replica(tmp_path: Path) -> Iterator[tuple[RedisProcess, RedisProcess]]:
    primary = RedisProcess(tmp_path / "primary")
    replica = RedisProcess(tmp_path / "replica", replica_of=primary)
    try:
        replica.wait_in_sync()
        yield primary, replica
    finally:
        replica.stop()
        primary.stop()


def test_a_commit_waits_for_its_replica(
    primary_and_replica: tuple[RedisProcess, RedisProcess],
) -> None:
    primary, replica = primary_and_replica
    store = StateStore(primary.client, "local", durability=Durability(1, 5000))
    done = store.commit(mutation("set", "decision.db", "postgres"))
    assert isinstance(done, Committed) and done.version == 1
    # acknowledged means the replica has it already: read it there, without waiting
    assert replica.client.hget(store.keys.entry("decision.db"), "value") == '"postgres"'
    assert replica.client.xlen(store.keys.log) == 1


def test_without_the_replicas_asked_for_a_commit_is_not_acknowledged(
    primary_and_replica: tuple[RedisProcess, RedisProcess],
) -> None:
    primary, _ = primary_and_replica
    store = StateStore(primary.client, "local", durability=Durability(2, 50))
    change = mutation("incr", "counter.n", 1)
    with pytest.raises(NotReplicated, match=r"1 of 2 replicas confirmed it within 50 ms"):
        store.commit(change)
    # the retry commits nothing twice and is still not acknowledged
    with pytest.raises(NotReplicated) as again:
        store.commit(change)
    assert again.value.done.duplicate and again.value.done.version == 1
    assert store.version("counter.n") == 1
    # once the deployment asks for what it has, the same retry is acknowledged
    enough = StateStore(primary.client, "local", durability=Durability(1, 5000))
    done = enough.commit(change)
    assert isinstance(done, Committed) and done.duplicate and done.version == 1


def test_a_replica_is_read_only_and_says_so(
    primary_and_replica: tuple[RedisProcess, RedisProcess],
) -> None:
    _, replica = primary_and_replica
    store = StateStore(replica.client, "local")
    with pytest.raises(ResponseError, match="READONLY"):  # from inside the script
        store.commit(mutation("set", "decision.db", "mysql"))


def default_config_text() -> str:
    return files("core.config").joinpath("default.yaml").read_text(encoding="utf-8")


def test_the_cli_says_a_commit_was_not_acknowledged_in_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alone = RedisProcess(tmp_path / "alone")  # no replica at all
    try:
        config = tmp_path / "deliberate.yaml"
        text = default_config_text().replace("    wait_for: 0", "    wait_for: 1", 1)
        text = text.replace("    timeout_ms: 1000", "    timeout_ms: 20", 1)
        assert "wait_for: 1" in text and "timeout_ms: 20" in text
        config.write_text(text, encoding="utf-8")
        argv = ["--redis-url", alone.url, "--config", str(config), "--log-level", "WARNING"]
        argv += ["--log-format", "text"]  # (a level alone asks for JSON lines)
        code, out, err = run(
            capsys, "local", *argv, "state", "set", "decision.db", "postgres", "--actor", "user:a"
        )
        assert code == 1 and out == ""
        assert err.strip() == (
            "deliberate: decision.db v1 is on the primary, but 0 of 1 replicas confirmed it "
            "within 20 ms: not acknowledged; retry the same change (it will not be applied "
            "twice)"
        )
    finally:
        alone.stop()


def test_a_commit_sent_again_after_its_answer_was_lost_still_waits_for_its_replica(
    primary_and_replica: tuple[RedisProcess, RedisProcess],
) -> None:
    """The first run landed on the primary, its answer lost, and the replica (stopped) never
    got it. Sent again on a fresh connection, the commit is this request's (its record names
    it), and the ``WAIT`` after it must still wait for the replica to hold that first run: a
    connection that has written nothing gives ``WAIT`` nothing to wait for, and it would
    count a replica that holds nothing. The duplicate of this request writes once (its
    record's time to live) so that it does."""
    primary, replica = primary_and_replica
    with RedisProxy(primary.client) as proxy:
        durability = Durability(1, 200, retry_sec=30)
        store = StateStore(proxy.client(socket_timeout=5), "local", durability=durability)
        assert isinstance(store.commit(mutation("set", "decision.warm", "x")), Committed)
        change = mutation("set", "decision.db", "postgres")
        os.kill(replica.process.pid, signal.SIGSTOP)
        try:
            with pytest.raises(NotReplicated) as unconfirmed:
                proxy.answer_lost(
                    partial(store.commit, change),
                    lambda: primary.client.xlen(store.keys.log) == 2,
                    "the commit",
                )
        finally:
            os.kill(replica.process.pid, signal.SIGCONT)
    done = unconfirmed.value.done
    assert not done.duplicate and done.version == 1  # this commit, not a repeat
    assert StateStore(primary.client, "local").version("decision.db") == 1
