"""Changes for a while: a commit with ``for_sec`` records its deadline with the commit, and
``revert_due`` reverts it then through the gateway's revert path (a revert mutation on the
log, its meta saying ``timed``): once however many sweepers race, after a restart (a new
gateway reads the deadlines from Redis), and never over a later write. Time is the Redis
server's; a sweep is told a moment past the deadline instead of waiting for it."""

from __future__ import annotations

import dataclasses
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from redis import Redis

from bot.app import App, build_app
from core.gateway.durations import duration_sec, duration_text
from core.gateway.outcome import Pending
from core.gateway.reverts import revert_id
from core.gateway.timed import TIMER, revert_due, timed_change
from core.runtime.outcome_notes import note_for
from core.state.commit_result import Committed, Rejected
from core.state.compaction import Compactor, Retention
from core.state.scripts import server_ms
from tests.conftest import write_config
from tests.factories import actor, mutation
from tests.rules.rig import config_text

AL, BO = actor("user:al"), actor("user:bo")
HALF_HOUR = 1800

KEYS = """    - pattern: "banner.*"
      type: string
      revert_after_sec: 600
      approval: {people: true}
"""


def commit(app: App, key: str, value: object, who: str = "user:al", **fields: object) -> Committed:
    done = app.gateway.propose(mutation("set", key, value, who, **fields))
    assert isinstance(done, Committed), done
    return done


def due(app: App) -> list[str]:
    return [str(m) for m in app.redis.zrange(app.store.keys.timed, 0, -1)]


def test_a_change_for_a_while_reverts_at_its_deadline_as_a_mutation_on_the_log(app: App) -> None:
    commit(app, "decision.db", "Postgres")
    done = commit(app, "decision.db", "MySQL", for_sec=HALF_HOUR)
    deadline = done.reverts_at
    assert deadline == done.ts + HALF_HOUR * 1000
    # written by the commit itself, with the deadline commit.lua computed
    assert app.redis.zscore(app.store.keys.timed, done.request.id) == deadline
    assert app.store.reverts_at([done.request.id]) == {done.request.id: deadline}
    assert revert_due(app.gateway) == 0  # not yet: the server's clock is before it
    assert revert_due(app.gateway, now_ms=deadline - 1) == 0
    assert app.store.get("decision.db").value == "MySQL"  # type: ignore[union-attr]

    assert revert_due(app.gateway, now_ms=deadline) == 1
    entry = app.store.get("decision.db")
    assert entry is not None and entry.value == "Postgres" and entry.version == 3
    records = app.log.latest(10, key="decision.db")
    assert [r.mutation.value for r in records] == ["Postgres", "MySQL", "Postgres"]
    timed, back = records[1].mutation, records[2].mutation
    assert timed.for_sec == HALF_HOUR and records[1].to_dict()["revertsAt"] == deadline
    assert back.id == revert_id(done.request.id) and back.meta["timed"] is True
    assert back.meta["reverts"] == done.request.id and back.for_sec is None
    # the person who made it for a while is its actor; the timer proposed it
    assert back.actor == AL and back.proposed_by == TIMER
    assert back.reason.startswith("timed revert of ")
    assert due(app) == [] and revert_due(app.gateway, now_ms=deadline + 10**6) == 0


def test_a_first_write_for_a_while_is_deleted_at_its_deadline(app: App) -> None:
    done = commit(app, "decision.tmp", "yes", for_sec=60)
    assert revert_due(app.gateway, now_ms=done.reverts_at) == 1
    assert app.store.get("decision.tmp") is None and app.store.version("decision.tmp") == 2


def test_two_sweepers_racing_revert_once(app: App, redis_client: Redis, workspace: str) -> None:
    commit(app, "decision.race", "a")
    done = commit(app, "decision.race", "b", for_sec=5)
    assert done.reverts_at is not None
    sweepers = [build_app(workspace, client=redis_client).gateway for _ in range(2)]
    start = threading.Barrier(2)
    counts: list[int] = []

    def sweep(index: int) -> None:
        start.wait()
        counts.append(revert_due(sweepers[index], now_ms=done.reverts_at))

    threads = [threading.Thread(target=sweep, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(counts) == [0, 1]
    records = app.log.latest(10, key="decision.race")
    assert [r.mutation.value for r in records] == ["a", "b", "a"]
    assert app.store.version("decision.race") == 3 and due(app) == []


def test_a_later_write_is_not_clobbered_and_the_skip_is_recorded(app: App) -> None:
    commit(app, "decision.later", "a")
    done = commit(app, "decision.later", "b", for_sec=60)
    commit(app, "decision.later", "c", who="user:bo")  # written over, for good
    assert done.reverts_at is not None
    assert revert_due(app.gateway, now_ms=done.reverts_at) == 0
    entry = app.store.get("decision.later")
    assert entry is not None and entry.value == "c" and entry.version == 3
    assert len(app.log.latest(10, key="decision.later")) == 3
    skipped = app.gateway.decisions.recent()[-1]
    assert skipped["reverts"] == done.request.id and skipped["reason"] == "conflict"
    assert "changed since that change (v2 then, v3 now)" in skipped["message"]
    assert due(app) == []  # dealt with: not tried again


def test_a_restarted_worker_still_reverts(redis_client: Redis, workspace: str) -> None:
    before = build_app(workspace, client=redis_client)
    commit(before, "decision.restart", "a")
    done = commit(before, "decision.restart", "b", for_sec=HALF_HOUR)
    del before  # the process that committed it is gone
    after = build_app(workspace, client=redis_client)  # a new gateway, nothing in memory
    assert revert_due(after.gateway, now_ms=done.reverts_at) == 1
    assert after.store.get("decision.restart").value == "a"  # type: ignore[union-attr]


def test_a_past_deadline_is_reverted_by_the_servers_own_clock(app: App) -> None:
    commit(app, "decision.past", "a")
    done = commit(app, "decision.past", "b", for_sec=60)
    # the deadline set in the past: the sweep's own clock (the server's) finds it due
    app.redis.zadd(app.store.keys.timed, {done.request.id: 1})
    assert revert_due(app.gateway) == 1
    assert app.store.get("decision.past").value == "a"  # type: ignore[union-attr]


def test_a_patterns_revert_after_applies_to_its_proposals(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    config = write_config(tmp_path, config_text("  []\n", keys=KEYS))
    team = build_app(workspace, config, client=redis_client)
    asked = team.gateway.propose(mutation("set", "banner.top", "We are live", "user:al"))
    assert isinstance(asked, Pending) and asked.proposal.mutation.for_sec == 600
    applied = team.gateway.apply_proposal(asked.proposal.id, BO, revision=0)
    assert isinstance(applied, Committed) and applied.reverts_at == applied.ts + 600_000
    assert applied.to_dict()["revertsAt"] == applied.reverts_at
    # people are told until when, in chat: to the second, and how far off from the commit
    until = datetime.fromtimestamp(applied.reverts_at / 1000, UTC)
    assert note_for(applied).message == (
        f'Committed: set banner.top "We are live" (v1) until {until:%Y-%m-%d %H:%M:%S} UTC '
        "(in 10 min)"
    )
    again = dataclasses.replace(applied, duplicate=True)  # a repeated click: an old commit
    assert note_for(again).message.endswith(
        f" until {until:%Y-%m-%d %H:%M:%S} UTC (already committed)"
    )
    # its revert needs no approval again (the approver asked for it with the change), and
    # is not itself a change for a while
    assert revert_due(team.gateway, now_ms=applied.reverts_at) == 1
    assert team.store.get("banner.top") is None
    back = team.log.latest(1, key="banner.top")[-1].mutation
    assert back.actor == BO and back.for_sec is None and back.meta["timed"] is True
    assert due(team) == []


def test_a_change_made_for_good_has_no_deadline(app: App) -> None:
    done = commit(app, "decision.good", "x")
    assert done.reverts_at is None and "revertsAt" not in done.to_dict()
    assert due(app) == [] and " until " not in note_for(done).message


def test_a_refused_change_records_no_deadline(app: App) -> None:
    refused = app.gateway.propose(
        mutation("set", "decision.cas", "x", "user:al", for_sec=60, expected_version=7)
    )
    assert isinstance(refused, Rejected) and due(app) == []
    assert server_ms(app.redis, app.store.keys.versions) > 0


@pytest.mark.parametrize(
    ("text", "seconds"), [("90s", 90), ("30m", 1800), ("2h", 7200), ("1d", 86_400), ("1h30m", 5400)]
)
def test_durations_read_as_people_write_them(text: str, seconds: int) -> None:
    assert duration_sec(text) == seconds == duration_sec(duration_text(seconds))


@pytest.mark.parametrize("text", ["", "30", "30x", "m", "-5m", "0s", "1.5h", "30 m", "99999d"])
def test_a_bad_duration_is_refused_saying_what_one_looks_like(text: str) -> None:
    with pytest.raises(ValueError, match=r"duration|no time at all|longer than"):
        duration_sec(text)


def test_compaction_keeps_the_record_a_timed_revert_needs(app: App) -> None:
    for group in app.redis.xinfo_groups(app.store.keys.log):  # no rules worker here
        app.redis.xgroup_destroy(app.store.keys.log, group["name"])
    commit(app, "decision.kept", "a")
    done = commit(app, "decision.kept", "b", for_sec=HALF_HOUR)
    for n in range(5):
        commit(app, f"decision.other{n}", str(n))
    report = Compactor(app.store, Retention(keep_records=1)).run()
    assert report.trimmed == 1 and report.held_back is not None
    assert f"made for a while (mutation {done.request.id})" in report.held_back
    assert revert_due(app.gateway, now_ms=done.reverts_at) == 1
    assert app.store.get("decision.kept").value == "a"  # type: ignore[union-attr]
    # reverted: nothing holds the record back any more
    assert Compactor(app.store, Retention(keep_records=1)).run().held_back is None


def test_where_a_change_for_a_while_stands_waiting_reverted_or_refused(app: App) -> None:
    commit(app, "decision.a", "x")
    kept = commit(app, "decision.a", "y", for_sec=60)
    commit(app, "decision.b", "x")
    over = commit(app, "decision.b", "y", for_sec=60)
    assert kept.reverts_at is not None and over.reverts_at is not None
    waiting = timed_change(app.store, kept.request.id, kept.reverts_at)
    assert (waiting.state, waiting.at, waiting.by) == (
        "waiting",
        kept.reverts_at,
        revert_id(kept.request.id),
    )
    [entry] = app.store.entries("decision.a")
    assert app.store.timed([entry]) == {"decision.a": waiting}

    commit(app, "decision.b", "z", who="user:bo")  # written over: its revert is refused
    assert revert_due(app.gateway, now_ms=over.reverts_at) == 1  # decision.a's alone
    done = timed_change(app.store, kept.request.id, kept.reverts_at)
    back = app.store.get("decision.a")
    assert back is not None and done.state == "reverted" and done.at == back.updated_at
    # the entry the timed revert wrote says so, by that revert: not as still timed
    assert app.store.timed([back]) == {"decision.a": done}
    refused = timed_change(app.store, over.request.id, over.reverts_at)
    assert (refused.state, refused.at) == ("refused", over.reverts_at)
    assert app.store.timed(app.store.entries("decision.b")) == {}  # "z", for good
