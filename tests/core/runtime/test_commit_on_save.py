"""A "Use this" click's commit goes in the same round trip as the click's save, made only on
that save (``core/runtime/on_save.py``): what that must not lose or do twice. Another
process saved the session first (the click's save is beaten: its commit must not run, and
the click, updated again on what was found, commits once); the answer to the save and its
commit is lost once both landed (sent again, the click is answered as committed, once, not
as a repeat). On the suite's Redis, through its real scripts; the lost answer through a
proxy that cuts the link."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import ResponseError
from redis.retry import Retry

from bot.app import build_app
from core.deliberation.actions import ActionType
from core.deliberation.commands import Commit
from core.deliberation.memory import ClickStatus
from core.deliberation.messages import UserSaid
from core.deliberation.view import View
from core.redis.client import RedisClient
from core.runtime.events import Event, OutcomeEvent
from core.runtime.on_save import foreseen
from core.runtime.outcome_notes import note_under
from core.runtime.runner import Runtime
from core.runtime.sessions import SAVE_LUA, SessionStore
from core.state.commit_result import Committed
from core.state.keys import WorkspaceKeys
from core.state.scripts import COMMIT_LUA
from tests.conftest import write_config
from tests.factories import actor, clicked, mutation
from tests.round_trips import Trips, counting_copy
from tests.servers.tcp_proxy import RedisProxy

ANN, BOB = actor("user:ann"), actor("user:bob")
IDEA = "what if we used postgres for the orders service"
WARM_UP = "what if we used redis for the session cache"  # (a decision of its own)


def say(runtime: Runtime, text: str, who: Any = ANN, session: str = "s1") -> View:
    events = runtime.send(session, UserSaid(text=text, actor=who))
    [view] = [e for e in events if isinstance(e, View)]
    return view


def outcome_of(events: list[Event]) -> OutcomeEvent:
    [outcome] = [e for e in events if isinstance(e, OutcomeEvent)]
    return outcome


def through(
    proxy: RedisProxy, server: Redis, workspace: str, tmp_path: Path, **options: Any
) -> tuple[Redis, Runtime, View]:
    """Ann's runtime on a client through ``proxy`` (``options``: the client's too), the
    scripts loaded first (a NOSCRIPT answer held would never be heard), and the view of her
    idea."""
    for source in (COMMIT_LUA, SAVE_LUA):
        server.script_load(source)
    client = proxy.client(decode_responses=True, socket_timeout=10, **options)
    runtime = build_app(workspace, unlearning(tmp_path), client=client).runtime(use_env=False)
    return client, runtime, say(runtime, IDEA)


def lost_answer(
    proxy: RedisProxy, runtime: Runtime, view: View, landed: Callable[[], object], what: str
) -> OutcomeEvent:
    """What Ann's "Use this" click on ``view`` came to when the answer to what it sent is
    lost once ``landed()`` (``RedisProxy.answer_lost``)."""
    click = clicked(view, ActionType.CONFIRM_CURRENT, "c1", ANN)
    return outcome_of(proxy.answer_lost(partial(runtime.send, "s1", click), landed, what))


def unlearning(tmp_path: Path) -> Path:
    """A config whose workspace learns nothing of clicks (a lesson would go before the
    commit, and a second past, the team's weights would be read again first)."""
    return write_config(tmp_path, "perception:\n  adapt: false\n")


@pytest.fixture
def counted(redis_client: RedisClient, workspace: str, tmp_path: Path) -> tuple[Runtime, Trips]:
    client, trips = counting_copy(redis_client)
    runtime = build_app(workspace, unlearning(tmp_path), client=client).runtime(use_env=False)
    # its scripts run once (a server, or a cluster's shard, that never ran one answers
    # NOSCRIPT and is sent it whole: a round trip more)
    view = say(runtime, WARM_UP, session="warm-up")
    warm = runtime.send("warm-up", clicked(view, ActionType.CONFIRM_CURRENT, "warm-up", ANN))
    assert outcome_of(warm).outcome == "committed"
    return runtime, trips


def test_a_click_whose_save_another_process_beat_commits_once_on_what_it_found(
    counted: tuple[Runtime, Trips], redis_client: RedisClient, workspace: str, tmp_path: Path
) -> None:
    """Ann's process keeps the session as her turn left it; Bob's turn lands through
    another process. Her click's save finds his: its commit, in the same round trip, finds
    the save's token missing and writes nothing; the click is updated again on his session,
    and sent again with its commit, which lands once (a first commit that had run would make
    this one a duplicate)."""
    ann, trips = counted
    bob = build_app(workspace, unlearning(tmp_path), client=redis_client).runtime(use_env=False)
    view = say(ann, IDEA)
    say(bob, "how many nodes would that need?", BOB)
    with trips.counting():
        events = ann.send("s1", clicked(view, ActionType.CONFIRM_CURRENT, "c1", ANN))
    outcome = outcome_of(events)
    assert outcome.outcome == "committed" and not outcome.duplicate, outcome.message
    # the save with its commit (and what it came to) that found his, the same again on his
    assert trips.count == 2
    app = build_app(workspace, client=redis_client)
    records = [r for r in app.log.latest(5) if r.mutation.key == outcome.key]
    assert [r.mutation.id for r in records] == [outcome.mutation_id]  # (the warm-up's apart)
    session = SessionStore(redis_client, workspace).load("s1")
    assert [t.who for t in session.interaction.recent] == ["user:ann", "user:bob"]


@pytest.mark.parametrize("retries", [0, 3], ids=["by the runtime", "inside the client"])
def test_a_click_whose_answer_is_lost_once_its_commit_landed_is_told_committed_once(
    server_redis: Redis, workspace: str, proxy: RedisProxy, tmp_path: Path, retries: int
) -> None:
    """The link is cut once the click's save and its commit have landed, their replies
    held: both are sent again (by the runtime, or by redis-py's ``Retry`` inside the
    client, which the runtime never sees), the save answers by its token as it was made,
    the commit by its idempotency record, which names this request, and the click is this
    commit (not "already done"), in the log once."""
    retry = Retry(NoBackoff(), retries)
    client, runtime, view = through(proxy, server_redis, workspace, tmp_path, retry=retry)
    log = WorkspaceKeys(workspace).log
    outcome = lost_answer(
        proxy, runtime, view, lambda: server_redis.xlen(log) == 1, "the click's commit"
    )
    assert outcome.outcome == "committed" and not outcome.duplicate, outcome.message
    assert server_redis.xlen(log) == 1
    app = build_app(workspace, client=server_redis)
    assert app.store.version(outcome.key or "") == 1
    client.close()


@pytest.mark.parametrize(
    "found", ["the click on its way", "the session before the click"], ids=["on its way", "before"]
)
def test_a_click_whose_resent_save_no_longer_finds_its_token_is_still_told_committed(
    server_redis: Redis, workspace: str, proxy: RedisProxy, tmp_path: Path, found: str
) -> None:
    """The click's save and its commit landed, their answer lost; before they are sent
    again, others saved so often that the session keeps none of its save's token (made
    here: 16 tokens of others, the version moved on, and the session found is the click's
    own, or one from before the click, which records none of it). The save sent again is
    beaten and the click updated again on what was found; the commit sent with it answered
    by its record, which names this request: the click is told it committed, and not sent
    to commit again (which, a new request, would be told "already done")."""
    client, runtime, view = through(proxy, server_redis, workspace, tmp_path)
    keys = WorkspaceKeys(workspace)
    before = server_redis.hget(keys.session("s1"), "data")

    def landed_then_forgotten() -> bool:
        if server_redis.xlen(keys.log) != 1:
            return False
        kept = before if found == "the session before the click" else None
        data = json.loads(kept or server_redis.hget(keys.session("s1"), "data"))
        data["version"] = int(server_redis.hget(keys.session("s1"), "version")) + 1
        others = [uuid.uuid4().hex for _ in range(16)]
        fields = {"data": json.dumps(data), "version": data["version"], "token": others[0]}
        server_redis.hset(keys.session("s1"), mapping={**fields, "saves": " ".join(others)})
        return True

    outcome = lost_answer(proxy, runtime, view, landed_then_forgotten, "the click's commit")
    assert outcome.outcome == "committed" and not outcome.duplicate, outcome.message
    assert server_redis.xlen(keys.log) == 1
    client.close()


def test_a_save_whose_row_fails_lets_no_commit_run_on_it(
    redis_client: RedisClient, workspace: str
) -> None:
    """A row the save cannot write (its stream's key holds a string) fails the save script
    before it keeps the session or its token: the commit sent after it, made only on that
    save, does not run."""
    app = build_app(workspace, client=redis_client)
    sessions = SessionStore(redis_client, workspace)
    read = sessions.load("s1")
    redis_client.set(WorkspaceKeys(workspace).transcript("s1"), "not a stream")
    row = app.runtime(use_env=False).transcripts.line("s1", "user:ann", IDEA, "corr-1")
    changed = read.with_interaction(read.interaction.model_copy(update={"turn_count": 1}))
    m = mutation("set", "decision.db", "postgres")
    verdict = app.gateway.ready(m)
    assert verdict is not None
    token = uuid.uuid4().hex
    commit = app.gateway.commit_on(verdict, WorkspaceKeys(workspace).session("s1"), token)
    with pytest.raises(ResponseError, match="WRONGTYPE"):
        sessions.store_along(read, changed, token, [row], 0, [commit])
    assert app.store.version("decision.db") == 0
    assert sessions.load("s1").version == 0


def test_a_click_whose_commit_comes_to_something_else_than_foreseen_saves_what_it_came_to(
    counted: tuple[Runtime, Trips], redis_client: RedisClient, workspace: str
) -> None:
    """The save of what the commit comes to goes with it, foreseen ("committed", the
    decision's next version), made only if the commit's record says so. Bob decided the key
    meanwhile, through the store, which Ann's session does not know: her commit conflicts,
    the foreseen save writes nothing (no "committed" traced, the click not recorded done),
    and what it came to is saved after it, in a round trip of its own."""
    ann, trips = counted
    view = say(ann, IDEA)
    click = clicked(view, ActionType.CONFIRM_CURRENT, "c1", ANN)
    session = SessionStore(redis_client, workspace).load("s1")
    [commit] = [c for c in ann.loop.update(session, click)[1] if isinstance(c, Commit)]
    app = build_app(workspace, client=redis_client)
    assert isinstance(app.store.commit(mutation("set", commit.mutation.key, "sqlite")), Committed)
    with trips.counting():
        events = ann.send("s1", click)
    outcome = outcome_of(events)
    # the save, the commit and the foreseen save (which wrote nothing); the gateway's record
    # of the refusal; the save of what it came to
    assert outcome.outcome == "rejected" and trips.count == 3
    assert app.store.version(commit.mutation.key) == 1
    saved = SessionStore(redis_client, workspace).load("s1")
    [record] = [c for c in saved.interaction.clicks if c.click_id == "c1"]
    assert record.status is ClickStatus.FAILED
    done = [
        e for e in ann.trace.for_correlation(click.correlation_id) if e["event"] == "action_done"
    ]
    assert [e["data"]["result"]["outcome"] for e in done] == ["rejected"]


def test_a_use_this_click_traces_what_it_came_to_once(counted: tuple[Runtime, Trips]) -> None:
    """What the commit came to, saved with it as foreseen, is traced once, with its beat
    evaluation, and the click is recorded done with the decision's version."""
    ann, trips = counted
    view = say(ann, IDEA)
    click = clicked(view, ActionType.CONFIRM_CURRENT, "c1", ANN)
    with trips.counting():
        events = ann.send("s1", click)
    outcome = outcome_of(events)
    assert outcome.outcome == "committed" and trips.count == 1
    trace = ann.trace.for_correlation(click.correlation_id)
    done = [e for e in trace if e["event"] == "action_done"]
    assert [e["data"]["result"]["version"] for e in done] == [1]
    assert len(ann.beat_history.for_correlation(click.correlation_id)) == 1
    saved = ann.sessions.load("s1")
    [record] = [c for c in saved.interaction.clicks if c.click_id == "c1"]
    assert record.status is ClickStatus.DONE and saved.interaction.decided == {outcome.key: 1}
    assert [e for e in events if isinstance(e, View)], "the outcome's view"


@pytest.mark.parametrize(
    ("record", "lands"),
    [
        (None, False),  # no commit made
        ("1-0\nv1\nother", False),  # made by another request
        ("1-0\nv2\nmine", False),  # made at another version
        ("1-0\nv1\nmine", True),
    ],
)
def test_a_save_made_on_a_commit_lands_only_if_its_record_says_so(
    redis_client: RedisClient, workspace: str, record: str | None, lands: bool
) -> None:
    """``session_cas.lua``'s ARGV[7]: the record of the commit the save is made on must end
    with the version and request foreseen; else nothing but the rows always written is."""
    keys = WorkspaceKeys(workspace)
    sessions = SessionStore(redis_client, workspace)
    read = sessions.load("s1")
    if record is not None:
        redis_client.set(keys.idempotency("m1"), record)
    row = (
        build_app(workspace, client=redis_client)
        .runtime(use_env=False)
        .transcripts.line("s1", "user:ann", IDEA, "corr-1")
    )
    changed = read.with_interaction(read.interaction.model_copy(update={"turn_count": 1}))
    saving = sessions.prepare(
        read, changed, uuid.uuid4().hex, [row], 0, made=(keys.idempotency("m1"), "v1\nmine")
    )
    landed = saving.landed(saving.call.run())
    assert (landed is not None) is lands
    assert sessions.load("s1").version == (1 if lands else 0)
    assert redis_client.exists(keys.transcript("s1")) == lands


def test_the_note_foreseen_is_the_note_of_the_commit_made(
    redis_client: RedisClient, workspace: str
) -> None:
    """What the save made on a commit says it came to is what the commit, made, is told
    (its version, its words); a change for a while, whose note says when it reverts, and a
    commit that expects no version are not foreseen."""
    app = build_app(workspace, client=redis_client)
    session_key = WorkspaceKeys(workspace).session("s1")
    m = mutation("set", "decision.db", "postgres", expected_version=0)
    verdict = app.gateway.ready(m)
    assert verdict is not None
    commit = app.gateway.commit_on(verdict, session_key, uuid.uuid4().hex)
    seen = foreseen(app.gateway, verdict, commit)
    assert seen is not None
    note, (record, tail) = seen
    made = app.gateway.propose(m)
    assert isinstance(made, Committed) and note == note_under(app.gateway.policy, made)
    assert record == WorkspaceKeys(workspace).idempotency(m.id) and tail.startswith("v1\n")
    for other in (
        mutation("set", "decision.db", "sqlite", expected_version=1, for_sec=60),
        mutation("set", "decision.db", "sqlite"),
    ):
        ready = app.gateway.ready(other)
        assert ready is not None
        call = app.gateway.commit_on(ready, session_key, uuid.uuid4().hex)
        assert foreseen(app.gateway, ready, call) is None


def test_a_click_whose_commit_record_is_gone_when_sent_again_is_told_what_it_came_to(
    server_redis: Redis,
    workspace: str,
    proxy: RedisProxy,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The click's three scripts landed, their answer lost, and the commit's idempotency
    record is gone before they are sent again (evicted from a full Redis): the commit, made
    again, conflicts with itself, but the save of what it came to answers by its token as it
    was made, only on that record: the click is told it committed (and the answer that said
    otherwise is logged), not failed as if nothing had been done."""
    client, runtime, view = through(proxy, server_redis, workspace, tmp_path)
    keys = WorkspaceKeys(workspace)
    saves = int(server_redis.hget(keys.session("s1"), "version") or 0)

    def landed_then_evicted() -> bool:
        version = int(server_redis.hget(keys.session("s1"), "version") or 0)
        if server_redis.xlen(keys.log) != 1 or version != saves + 2:
            return False
        for name in server_redis.scan_iter(match=keys.idempotency("*")):
            server_redis.delete(name)
        return True

    outcome = lost_answer(proxy, runtime, view, landed_then_evicted, "the click's three scripts")
    assert outcome.outcome == "committed" and outcome.version == 1, outcome.message
    assert server_redis.xlen(keys.log) == 1
    assert "answered otherwise when sent again" in caplog.text
    client.close()


def test_a_save_made_on_a_commit_that_did_not_come_is_not_read_as_saved(
    redis_client: RedisClient, workspace: str
) -> None:
    """Read as any save (``Saving.again``), a save whose commit's record is not as foreseen
    wrote nothing and says so: not saved, on the session as read."""
    keys, sessions = WorkspaceKeys(workspace), SessionStore(redis_client, workspace)
    read = sessions.load("s1")
    changed = read.with_interaction(read.interaction.model_copy(update={"turn_count": 1}))
    made = (keys.idempotency("m1"), "v1\nmine")
    stored = sessions.prepare(read, changed, uuid.uuid4().hex, [], 0, made=made).again()
    assert not stored.saved and stored.session is read
    assert sessions.load("s1").version == 0 and sessions.known("s1") is None
