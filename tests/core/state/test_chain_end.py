"""A reader of the log's past vouches for where it stopped reading: records deleted after the
last one it read (at the end of the log, or just past the moment asked for) are a break
there, as ``log verify`` finds them, never a shorter history answered as the whole. Found by
the attack on issue 41: XDEL of the newest record broke ``log verify`` but ``state get --at``
answered the value it had undone."""

from __future__ import annotations

import threading

import pytest
from redis import Redis

from bot.app import App
from core.state.chain import ChainBroken, verify_chain
from core.state.commit_result import Committed
from core.state.replay import Moment, Replayer
from core.state.store import StateStore
from tests.bot.cli.process import run
from tests.core.state.test_chain import commit
from tests.core.state.test_chain_start import now
from tests.factories import mutation


def values(store: StateStore, *said: str) -> list[Committed]:
    done = []
    for value in said:
        outcome = store.commit(mutation("set", "decision.db", value))
        assert isinstance(outcome, Committed)
        done.append(outcome)
    return done


def test_the_newest_records_deleted_are_a_break_for_every_reader(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    done = values(store, "a", "b", "c", "undone")
    redis_client.xdel(store.keys.log, done[-1].log_id)
    report = verify_chain(redis_client, store.keys)
    assert report.broken is not None and report.broken.where == done[-1].log_id
    with pytest.raises(ChainBroken, match="newest record") as refused:
        Replayer(store).as_of(now(store))
    assert refused.value.broken.where == done[-1].log_id
    with pytest.raises(ChainBroken, match="newest record"):
        Replayer(store).verify()
    with pytest.raises(ChainBroken, match="newest record"):
        list(Replayer(store).history(Moment.at_record(done[1].log_id), None))
    # what the log still holds in full is answered
    image = Replayer(store).as_of(Moment.at_record(done[1].log_id))
    assert image.entries["decision.db"].value == "b"


def test_records_deleted_just_past_the_moment_asked_are_a_break(
    redis_client: Redis, workspace: str
) -> None:
    """Records 4 and 5 deleted: the state at record 5's moment is not the state at 3's."""
    store = StateStore(redis_client, workspace)
    done = values(store, *(f"v{i}" for i in range(1, 9)))
    redis_client.xdel(store.keys.log, done[3].log_id, done[4].log_id)
    with pytest.raises(ChainBroken) as refused:
        Replayer(store).as_of(Moment.at_record(done[4].log_id))
    assert refused.value.broken.where == done[5].log_id
    assert "is record 6 of the chain where 4 is due" in str(refused.value)
    with pytest.raises(ChainBroken):
        Replayer(store).as_of(Moment.at_record(done[5].log_id))
    image = Replayer(store).as_of(Moment.at_record(done[1].log_id))
    assert image.entries["decision.db"].value == "v2"


def test_the_head_moved_back_over_a_rewritten_record_is_a_break(
    redis_client: Redis, workspace: str
) -> None:
    store = StateStore(redis_client, workspace)
    done = values(store, "a", "b", "c")
    redis_client.hset(store.keys.chain, "hash", "0" * 40)
    with pytest.raises(ChainBroken, match="head"):
        Replayer(store).as_of(now(store))
    redis_client.hset(store.keys.chain, mapping={"n": "2", "id": done[1].log_id})
    with pytest.raises(ChainBroken, match="head"):
        Replayer(store).as_of(now(store))


def test_commits_while_a_replay_reads_are_no_break(redis_client: Redis, workspace: str) -> None:
    """The head is read after the records, before the record after them is looked for: a
    commit made meanwhile is past both, never taken for a log cut short."""
    store = StateStore(redis_client, workspace)
    commit(store, 5)
    done = threading.Event()

    def write() -> None:
        commit(store, 300)
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    replays = 0
    try:
        while not done.is_set() or replays < 20:
            Replayer(store).as_of(now(store))
            Replayer(store).verify()
            replays += 1
    finally:
        writer.join()
    assert verify_chain(redis_client, store.keys).ok


def test_the_cli_refuses_a_log_cut_short_in_one_line(
    capsys: pytest.CaptureFixture[str], app: App, redis_client: Redis
) -> None:
    """The attack as it was typed: XDEL of the newest record, then 'state get --at'."""
    ws = app.store.workspace
    done = values(app.store, "a", "b", "undone")
    redis_client.xdel(app.store.keys.log, done[-1].log_id)
    for argv in (
        ("state", "get", "decision.db", "--at", done[-1].log_id),
        ("state", "list", "--at", done[-1].log_id),
        ("replay", "--verify"),
    ):
        code, out, err = run(capsys, ws, *argv)
        assert code == 1 and out == "" and "undone" not in err, argv
        assert len(err.splitlines()) == 1 and "newest record(s) were deleted" in err, argv
