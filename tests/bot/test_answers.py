"""``/deliberate log KEY`` and ``why KEY`` read a bounded part of the log whatever its length
(any member can send them): what they read is counted on a real Redis client, not timed.
``/deliberate pending`` lists what waits for people, a secret key's value hidden."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from bot.chat.answers import HELP, KEY_SCAN, READS_PER_MINUTE, answer
from core.gateway.outcome import Pending
from core.gateway.timed import revert_due
from core.state.commit_result import Committed
from tests.bot.test_console_lifecycle import approval_config
from tests.factories import actor, mutation

ASKER = "slack:U0ASKER"  # who asks /deliberate (each counted in their workspace)


class CountingRedis(Redis):
    """A real client that counts the commands it sends and the stream records it reads."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands: list[str] = []
        self.records_read = 0

    def execute_command(self, *args: Any, **options: Any) -> Any:
        reply = super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        name = str(args[0]).upper()
        self.commands.append(name)
        if name in ("XRANGE", "XREVRANGE"):
            self.records_read += len(reply or [])
        return reply

    def forget(self) -> None:
        self.commands, self.records_read = [], 0


@pytest.fixture
def counting(server_redis: Redis) -> CountingRedis:
    return CountingRedis(connection_pool=server_redis.connection_pool)


@pytest.fixture
def long_log(counting: CountingRedis, workspace: str) -> App:
    """``decision.old`` set first, then three times ``KEY_SCAN`` changes of other keys, then
    ``decision.new``."""
    app = build_app(workspace, client=counting)
    app.store.commit(mutation("set", "decision.old", "postgres", reason="the first call"))
    for i in range(3 * KEY_SCAN):
        app.store.commit(mutation("set", f"decision.other-{i % 40}", i))
    app.store.commit(mutation("set", "decision.new", "redis", reason="cache"))
    counting.forget()
    return app


@pytest.mark.parametrize("command", ["log", "why"])
def test_a_key_never_written_is_answered_without_reading_the_log(
    long_log: App, counting: CountingRedis, command: str
) -> None:
    said = answer(long_log, f"{command} decision.never-written", asker=ASKER)
    assert "decision.never-written" in said and "never written" in said
    assert counting.records_read == 0 and len(counting.commands) <= 2


def test_log_of_a_key_changed_long_ago_reads_a_bounded_part_and_says_so(
    long_log: App, counting: CountingRedis
) -> None:
    said = answer(long_log, "log decision.old", asker=ASKER)
    assert counting.records_read <= KEY_SCAN
    assert len(counting.commands) <= 2 + KEY_SCAN // 500
    assert f"No change of decision.old among the newest {KEY_SCAN} records" in said
    assert f"(it holds {3 * KEY_SCAN + 2})" in said


def test_why_of_a_key_changed_long_ago_answers_from_its_entry(
    long_log: App, counting: CountingRedis
) -> None:
    said = answer(long_log, "why decision.old", asker=ASKER)
    assert said.startswith("decision.old: v1 by user:alice")
    assert f"its mutation is older than the newest {KEY_SCAN} records" in said
    assert counting.records_read <= KEY_SCAN


def test_a_recent_key_is_found_at_once(long_log: App, counting: CountingRedis) -> None:
    why = answer(long_log, "why decision.new", asker=ASKER)
    assert why.startswith('decision.new: set "redis" -> v1 by user:alice, reason: cache')
    log = answer(long_log, "log decision.new", asker=ASKER)
    assert 'set decision.new "redis" -> v1' in log and "newest" not in log
    assert counting.records_read <= 2 * 500


def test_a_short_log_is_read_whole_and_says_nothing_about_a_bound(app: App) -> None:
    app.store.commit(mutation("set", "decision.db", "postgres"))
    app.store.commit(mutation("delete", "decision.db"))
    app.store.commit(mutation("set", "decision.cache", "redis"))
    log = answer(app, "log decision.db", asker=ASKER)
    assert 'set decision.db "postgres" -> v1' in log and "delete decision.db -> v2" in log
    assert "newest" not in log
    assert answer(app, "why decision.db", asker=ASKER).startswith(
        "decision.db: delete -> v2 by user:alice"
    )


def test_the_bound_counts_records_not_the_keys_own(app: App) -> None:
    """Every record of the key is found when the key's first version is within reach."""
    for i in range(5):
        app.store.commit(mutation("set", "decision.db", f"v{i}"))
    history = app.log.of_key("decision.db", limit=30, scan=KEY_SCAN)
    assert [r.version for r in history.records] == [1, 2, 3, 4, 5] and history.complete
    assert history.scanned == 5  # the log's five records, the key's first version among them


def test_pending_lists_each_proposal_and_whom_it_awaits_with_secrets_hidden(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    path = approval_config(tmp_path, "{people: true, quorum: 2}", pattern='"secret.*"')
    app = build_app(workspace, path, client=redis_client)
    assert answer(app, "pending", asker=ASKER) == "No proposal waits for anyone."
    assert "/deliberate pending" in HELP
    secret = app.gateway.propose(mutation("set", "secret.stream-key", "sk-live-123", "admin:root"))
    scene = app.gateway.propose(mutation("set", "scene.name", "BRB", "agent:llm"))
    assert isinstance(secret, Pending) and isinstance(scene, Pending)
    app.gateway.apply_proposal(secret.proposal.id, actor("admin:ada"), revision=0)
    said = answer(app, "pending", asker=ASKER)
    assert "sk-live-123" not in said
    lines = said.splitlines()
    assert lines[0] == "2 waiting, soonest deadline first:"
    assert lines[1] == f"{secret.proposal.id}@0  set secret.stream-key = (secret)"
    assert re.fullmatch(
        r"  proposed and requested by admin:root, \d+s ago; expires at .+ UTC \(in 24 h\)", lines[2]
    )
    assert lines[3:5] == [
        "  approvals 1 of 2 (admin:ada)",
        "  awaits 1 more approval by an admin, not admin:ada",
    ]
    assert lines[5] == f"{scene.proposal.id}@0  set scene.name = BRB"
    assert lines[7:] == [
        "  approvals 0 of 1",
        "  awaits 1 more approval by a user, moderator or admin",
    ]
    assert answer(app, "PENDING", asker=ASKER) == said


def test_state_says_when_a_change_for_a_while_reverts_and_by_which_mutation(app: App) -> None:
    app.store.commit(mutation("set", "decision.db", "pg"))
    timed = app.gateway.propose(mutation("set", "decision.db", "mysql", "user:al", for_sec=1800))
    assert isinstance(timed, Committed) and timed.reverts_at is not None
    [line] = answer(app, "state decision.", asker=ASKER).splitlines()
    assert re.fullmatch(
        r'decision.db = "?mysql"?  \(v2, user:al\); reverts at \d{4}-\d\d-\d\d '
        rf"\d\d:\d\d:\d\d UTC \(in 30 min\) by revert-{timed.mutation.id}",
        line,
    ), line
    assert revert_due(app.gateway, now_ms=timed.reverts_at) == 1
    [line] = answer(app, "state decision.", asker=ASKER).splitlines()
    assert "reverts at" not in line and "reverted at " in line
    assert line.endswith(f"by revert-{timed.mutation.id}")


def test_answers_that_read_much_are_limited_per_person_in_a_workspace(
    app: App, workspace: str
) -> None:
    """``state``, ``log`` and ``why`` are counted together for each asker: past
    ``READS_PER_MINUTE`` in a minute the answer says how long to wait and reads nothing;
    another person, another workspace and the answers that read little are not held back."""
    for n in range(READS_PER_MINUTE):
        said = answer(app, ("state", "log", "why decision.db")[n % 3], asker=ASKER)
        assert not said.startswith("Too many"), (n, said)
    refused = answer(app, "state", asker=ASKER)
    wait = re.fullmatch(
        r"Too many state, log and why answers a minute: ask again in (\d+) s\.", refused
    )
    assert wait is not None and 1 <= int(wait[1]) <= 60, refused
    assert answer(app, "log", asker=ASKER).startswith("Too many state, log and why answers")
    assert answer(app, "state", asker="slack:U0OTHER") == "No keys are set."
    assert answer(app, "pending", asker=ASKER) == "No proposal waits for anyone."
    elsewhere = app.for_workspace(f"{workspace}-b")
    assert answer(elsewhere, "state", asker=ASKER) == "No keys are set."
