"""An Undo click through ``Runtime.send``: what it must know of the change it undoes (its log
record, the key's version, the clock, whether the revert committed) is asked as the click
comes (when this process keeps a session that lists it; else in the same pipeline as the
click's save), and nothing it checked is lost by that: a lapsed idempotency record still
sends it through the log, a write landing between the lookup and the commit is not
overwritten, a refusal is logged once, a lookup nothing reads gives its connection back,
and a pipeline whose answer was lost is sent again and saves once."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from redis import ConnectionPool, Redis
from redis.backoff import NoBackoff
from redis.client import Pipeline
from redis.retry import Retry

from bot.app import App, build_app
from core.deliberation.actions import ActionType
from core.deliberation.messages import ActionClicked, UserSaid
from core.deliberation.view import View
from core.gateway.reverts import Revert, revert, revert_id, undo_lookup
from core.redis.client import RedisClient, resend
from core.redis.wire import wire_of
from core.runtime.events import Event, OutcomeEvent
from core.runtime.made_here import MadeHere
from core.runtime.runner import Runtime
from core.runtime.sessions import SAVE_LUA, SessionStore
from core.state.commit_result import Committed
from core.state.keys import WorkspaceKeys
from core.state.mutation_log import MutationLog
from core.state.scripts import COMMIT_LUA, LuaScript
from core.state.store import StateStore
from tests.conftest import delete_workspace, write_config
from tests.factories import actor, mutation
from tests.servers.redis_process import RedisProcess
from tests.servers.tcp_proxy import RedisProxy

ALICE = actor("user:alice")
IDEA = "what if we used postgres for the orders service"


def press(runtime: Runtime, view: View, action: str, click_id: str) -> list[Event]:
    button = next(b for b in view.buttons if b.action == action)
    click = ActionClicked(
        action=action,
        target_id=button.target_id,
        expected_version=button.target_version,
        click_id=click_id,
        actor=ALICE,
    )
    return runtime.send("s1", click)


def outcome(events: list[Event]) -> OutcomeEvent:
    [found] = [e for e in events if isinstance(e, OutcomeEvent)]
    return found


def used(runtime: Runtime) -> tuple[View, OutcomeEvent]:
    """A "Use this" click committed: the view with its Undo, and what it committed."""
    [view] = [
        e for e in runtime.send("s1", UserSaid(text=IDEA, actor=ALICE)) if isinstance(e, View)
    ]
    done = press(runtime, view, ActionType.CONFIRM_CURRENT, "c1")
    [after] = [e for e in done if isinstance(e, View)]
    assert outcome(done).outcome == "committed"
    return after, outcome(done)


def test_an_undo_whose_idempotency_record_lapsed_finds_the_change_in_the_log(
    redis_client: RedisClient, workspace: str
) -> None:
    app = build_app(workspace, client=redis_client)
    runtime = app.runtime(use_env=False)
    after, done = used(runtime)
    assert done.mutation_id is not None and done.key is not None
    app.redis.delete(app.store.keys.idempotency(done.mutation_id))
    undone = outcome(press(runtime, after, ActionType.REVERT_MUTATION, "u1"))
    assert undone.outcome == "committed" and app.store.get(done.key) is None
    assert app.store.version(done.key) == 2


class BeforeCommit(Redis):
    """A real client that runs ``interloper``, once given one, just before it sends the next
    commit, alone or in a pipeline (another person's write lands between the Undo's lookup
    and its commit)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commit_sha = LuaScript(self, COMMIT_LUA).sha
        self.interloper: Callable[[], object] | None = None

    def execute_command(self, *args: Any, **options: Any) -> Any:
        self._before([args])
        return super().execute_command(*args, **options)  # type: ignore[no-untyped-call]

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Pipeline:
        """A pipeline that runs ``interloper`` before it sends a commit (an Undo's revert
        goes in one with the save of what it comes to)."""
        pipe = super().pipeline(transaction, shard_hint)
        execute = pipe.execute

        def checked(raise_on_error: bool = True) -> list[Any]:
            self._before([args for args, _ in pipe.command_stack])
            return execute(raise_on_error)

        pipe.execute = checked  # type: ignore[method-assign]
        return pipe

    def _before(self, commands: list[tuple[Any, ...]]) -> None:
        if self.interloper is None:
            return
        if any(args[:2] == ("EVALSHA", self.commit_sha) for args in commands):
            interloper, self.interloper = self.interloper, None
            interloper()


@pytest.mark.parametrize("how", ["made here", "looked up", "read first"])
def test_a_write_between_an_undos_lookup_and_its_commit_is_not_overwritten(
    server_redis: Redis, workspace: str, how: str
) -> None:
    """Bob's write lands just before the revert's commit: after the click came (of a change
    this process made, checked on what its commit said), after the lookup sent as the click
    came (of one it does not keep), or after the lookup sent with the click's save (by a
    process that keeps no copy of the session: the revert a round trip after it): the
    commit finds the key moved on, and the refusal is told and logged alike."""
    client = BeforeCommit(connection_pool=server_redis.connection_pool)
    runtime = build_app(workspace, client=client).runtime(use_env=False)
    after, done = used(runtime)
    assert done.mutation_id is not None and done.key is not None
    if how == "looked up":
        runtime.made = MadeHere()
    elif how == "read first":  # (another process's runtime: it keeps neither)
        runtime = build_app(workspace, client=client).runtime(use_env=False)
    bob = build_app(workspace, client=server_redis)
    key = done.key
    client.interloper = lambda: bob.gateway.propose(mutation("set", key, "MySQL", "user:bob"))
    undone = outcome(press(runtime, after, ActionType.REVERT_MUTATION, "u1"))
    assert client.interloper is None  # it ran
    assert (undone.outcome, undone.reason) == ("rejected", "conflict")
    assert (
        undone.message == f"{key} changed since that change (v1 then, v2 now): nothing was reverted"
    )
    assert bob.store.get(key).value == "MySQL"  # type: ignore[union-attr]
    logged = bob.gateway.decisions.recent()[-1]
    assert (logged["mutation_id"], logged["reason"]) == (revert_id(done.mutation_id), "conflict")
    assert (logged["message"], logged["reverts"]) == (undone.message, done.mutation_id)


def test_a_save_and_lookup_whose_answer_was_lost_are_sent_again_and_save_once(
    server_redis: Redis, workspace: str, proxy: RedisProxy
) -> None:
    app: App = build_app(workspace, client=server_redis)
    done = app.gateway.propose(mutation("set", "decision.db", "Postgres", "user:al"))
    assert isinstance(done, Committed)
    client = proxy.client()
    sessions = SessionStore(client, workspace)
    lookup = undo_lookup(StateStore(client, workspace), done.request.id)
    read = sessions.load("s1")  # connected, both scripts loaded: the next command is the pair
    assert sessions.store_along(read, read, uuid.uuid4().hex, along=[lookup])[0].saved
    changed = read.with_interaction(read.interaction.model_copy(update={"turn_count": 1}))
    save = partial(sessions.store_along, read, changed, uuid.uuid4().hex, along=[lookup])
    key = WorkspaceKeys(workspace).session("s1")
    stored, [looked_up] = proxy.answer_lost(  # its answer never reaches the runtime
        partial(resend, save, client, 30),
        lambda: server_redis.hget(key, "version") == "1",
        "the save",
    )
    assert stored == (True, changed.model_copy(update={"version": 1}))
    assert server_redis.hget(key, "version") == "1"
    undone = revert(app.gateway, Revert(done.request.id, ALICE, version=1), looked_up)
    assert isinstance(undone, Committed) and app.store.get("decision.db") is None


@pytest.mark.parametrize("made_here", [True, False], ids=["made here", "looked up"])
@pytest.mark.parametrize("retries", [0, 3], ids=["by the runtime", "inside the client"])
def test_an_undo_whose_commit_and_save_lost_their_answer_is_told_reverted_once(
    server_redis: Redis, workspace: str, proxy: RedisProxy, retries: int, made_here: bool
) -> None:
    """The revert's commit goes with the click's save and the save of what it comes to,
    made only on it (its lookup, for a change this process does not keep, sent as the click
    came); the link is cut once they landed, their replies held. Sent again (by the
    runtime, or by redis-py's ``Retry`` inside the client), the commit answers by its
    record (this request's), the saves by their tokens: the Undo is told reverted, once,
    the thread open again, and the log holds one revert."""
    for source in (COMMIT_LUA, SAVE_LUA):  # (a NOSCRIPT answer held would never be heard)
        server_redis.script_load(source)
    options = {"decode_responses": True, "socket_timeout": 10}
    pool = proxy.client(**options, retry=Retry(NoBackoff(), retries)).connection_pool
    client = BeforeCommit(connection_pool=pool)
    runtime = build_app(workspace, client=client).runtime(use_env=False)
    after, _ = used(runtime)
    if not made_here:
        runtime.made = MadeHere()
    keys = WorkspaceKeys(workspace)
    saves = int(server_redis.hget(keys.session("s1"), "version") or 0)

    def landed() -> bool:
        version = int(server_redis.hget(keys.session("s1"), "version") or 0)
        return server_redis.xlen(keys.log) == 2 and version == saves + 2

    client.interloper = proxy.hold_replies  # (the lookup's round trip answered: the next held)
    events = proxy.answer_lost(
        partial(press, runtime, after, ActionType.REVERT_MUTATION, "u1"),
        landed,
        "the revert and the save of what it came to",
        hold=False,
    )
    assert client.interloper is None  # (the replies held from the commit's write on)
    undone = outcome(events)
    assert undone.outcome == "committed" and not undone.duplicate, undone.message
    assert server_redis.xlen(keys.log) == 2
    kept = SessionStore(server_redis, workspace).load("s1")
    assert kept.version == saves + 2 and kept.interaction.thread_status.value == "open"
    assert [c.status.value for c in kept.interaction.clicks if c.click_id == "u1"] == ["done"]


def test_an_undo_takes_its_candidate_back_to_the_table_in_the_save_made_on_its_commit(
    redis_client: RedisClient, workspace: str
) -> None:
    """What the Undo came to, saved as foreseen: the thread open again, the decision
    unpinned, one ``action_done`` traced with the revert's version."""
    runtime = build_app(workspace, client=redis_client).runtime(use_env=False)
    after, done = used(runtime)
    undo = next(b for b in after.buttons if b.action == ActionType.REVERT_MUTATION)
    events = press(runtime, after, ActionType.REVERT_MUTATION, "u1")
    assert outcome(events).outcome == "committed" and outcome(events).version == 2
    kept = SessionStore(redis_client, workspace).load("s1")
    assert kept.interaction.thread_status.value == "open" and not kept.working.pinned_decisions
    assert [c.status.value for c in kept.interaction.clicks if c.click_id == "u1"] == ["done"]
    trace = runtime.trace.for_correlation(outcome(events).correlation_id)
    assert [e["data"]["result"]["version"] for e in trace if e["event"] == "action_done"] == [2]
    assert undo.target_id == done.mutation_id


@pytest.mark.parametrize("made_here", [True, False], ids=["made here", "looked up"])
def test_an_undo_of_a_key_changed_since_is_refused_and_logged_once(
    redis_client: RedisClient, workspace: str, made_here: bool
) -> None:
    """Bob changed the key before the Undo. Of a change this process committed, the revert
    goes with the click's save and its commit finds the key moved on; of one it does not
    keep, the lookup sent as the click came says so and nothing is committed on the save
    (the refusal checked again, and logged, once the save is heard of). Either way the
    Undo is told in the same words, and its refusal logged once."""
    app = build_app(workspace, client=redis_client)
    runtime = app.runtime(use_env=False)
    after, done = used(runtime)
    assert done.key is not None and done.mutation_id is not None
    if not made_here:
        runtime.made = MadeHere()
    app.gateway.propose(mutation("set", done.key, "MySQL", "user:bob"))
    undone = outcome(press(runtime, after, ActionType.REVERT_MUTATION, "u1"))
    assert (undone.outcome, undone.reason) == ("rejected", "conflict")
    assert undone.message == (
        f"{done.key} changed since that change (v1 then, v2 now): nothing was reverted"
    )
    refusals = [
        d for d in app.gateway.decisions.recent() if d["mutation_id"] == revert_id(done.mutation_id)
    ]
    assert [(d["reason"], d["message"], d["reverts"]) for d in refusals] == [
        ("conflict", undone.message, done.mutation_id)
    ]
    assert app.store.get(done.key).value == "MySQL"  # type: ignore[union-attr]


def test_an_undo_lookup_no_update_reads_gives_its_connection_back(
    server_redis: Redis, workspace: str
) -> None:
    """The same Undo click delivered again once it is done: its lookup goes as it comes (the
    session lists what it undoes), the update answers "already handled" without asking it,
    and the reply is read all the same: no connection stays taken with a reply in it."""
    client = Redis(connection_pool=ConnectionPool(**server_redis.connection_pool.connection_kwargs))
    wire = wire_of(client)
    assert wire is not None
    runtime = build_app(workspace, client=client).runtime(use_env=False)
    after, _ = used(runtime)
    assert outcome(press(runtime, after, ActionType.REVERT_MUTATION, "u1")).outcome == "committed"
    runtime.made = MadeHere()  # (a change it does not keep: looked up as the click comes)
    pool = client.connection_pool

    def taken() -> int:  # (the wire keeps some between calls: not taken by anyone)
        return len(pool._in_use_connections) - len(wire._idle)  # type: ignore[attr-defined]

    before = taken()
    again = press(runtime, after, ActionType.REVERT_MUTATION, "u1")
    assert [e.outcome for e in again if isinstance(e, OutcomeEvent)] == []  # (a notice)
    assert taken() == before
    assert all(not conn.can_read() for conn in wire._idle)  # type: ignore[attr-defined]
    client.close()


def test_an_undo_of_a_change_made_here_restores_what_its_commit_said_was_there(
    redis_client: RedisClient, workspace: str
) -> None:
    """ "Use this" twice on one thread (the second decides the key at its next version); the
    Undo of the second, asked nothing first (its commit said what the key held), puts the
    first decision back, as the log's record of the second has it."""
    app = build_app(workspace, client=redis_client)
    runtime = app.runtime(use_env=False)
    _, first = used(runtime)
    assert first.key is not None
    [view] = [
        e
        for e in runtime.send(
            "s1", UserSaid(text="make it postgres 16 with pgbouncer", actor=ALICE)
        )
        if isinstance(e, View)
    ]
    second = press(runtime, view, ActionType.CONFIRM_CURRENT, "c2")
    decided = outcome(second)
    assert (decided.outcome, decided.version) == ("committed", 2) and decided.mutation_id
    made = runtime.made.record(decided.mutation_id)
    assert made is not None and made.prev_json is not None  # (kept: no lookup to come)
    [after] = [e for e in second if isinstance(e, View)]
    undone = outcome(press(runtime, after, ActionType.REVERT_MUTATION, "u1"))
    assert (undone.outcome, undone.version) == ("committed", 3), undone.message
    entry = app.store.get(first.key)
    assert entry is not None and entry.value == first.value
    [record] = app.log.latest(1)
    logged = MutationLog(app.redis, app.store.keys).find(decided.mutation_id)
    assert logged is not None and record.mutation.value == logged.prev == first.value
    assert record.mutation.meta["revertsLogId"] == logged.log_id == made.log_id


def test_an_undo_past_its_time_is_refused_by_its_commit(
    redis_client: RedisClient, workspace: str
) -> None:
    """Of a change this process committed, when the Undo was offered is the commit's to
    check (the server's clock against the change's time and the policy's window): heard as
    made an hour ago, the Undo is refused as expired, in the words an Undo looked up is
    refused in, nothing is reverted, and the refusal is logged once."""
    app = build_app(workspace, client=redis_client)
    runtime = app.runtime(use_env=False)
    after, done = used(runtime)
    assert done.mutation_id is not None and done.key is not None
    heard = runtime.made._made.get(done.mutation_id)  # (as this process heard it)
    assert heard is not None
    runtime.made.heard(replace(heard, ts=heard.ts - 3_600_000))
    undone = outcome(press(runtime, after, ActionType.REVERT_MUTATION, "u1"))
    assert (undone.outcome, undone.reason) == ("rejected", "expired")
    assert undone.message.startswith("Undo was offered until ")
    assert undone.message.endswith(f"`deliberate revert {done.mutation_id}` can still revert it")
    assert "ago)" in undone.message
    assert app.store.get(done.key) is not None and app.store.version(done.key) == 1
    refusals = [
        d for d in app.gateway.decisions.recent() if d["mutation_id"] == revert_id(done.mutation_id)
    ]
    assert [(d["reason"], d["message"], d["reverts"]) for d in refusals] == [
        ("expired", undone.message, done.mutation_id)
    ]


def test_no_value_of_a_secret_key_is_kept_for_its_undo(
    tmp_path: Path, redis_client: RedisClient, workspace: str
) -> None:
    """A decision whose key is secret: its commit is not asked to say what the key held,
    and the process keeps nothing of it (its Undo looks it up, as any other process's
    does)."""
    shipped = files("core.config").joinpath("default.yaml").read_text(encoding="utf-8")
    secret = '  keys:\n    - pattern: "decision.*"\n      type: string\n      secret: true\n'
    config = write_config(tmp_path, shipped.replace("  keys:\n", secret, 1))
    app = build_app(workspace, config, client=redis_client)
    runtime = app.runtime(use_env=False)
    after, done = used(runtime)
    assert done.mutation_id is not None and app.gateway.policy.is_secret(str(done.key))
    assert runtime.made.record(done.mutation_id) is None
    verdict = app.gateway.ready(mutation("set", str(done.key), "hunter2", "user:alice"))
    assert verdict is not None  # (its commit on a save is not even asked to say it)
    assert app.gateway.commit_on(verdict, "session", "a" * 32).args[18:19] in ([], [""])
    undone = outcome(press(runtime, after, ActionType.REVERT_MUTATION, "u1"))
    assert undone.outcome == "committed" and app.store.get(str(done.key)) is None


def test_an_undo_whose_revert_did_not_run_on_its_save_is_checked_by_what_is_asked_then(
    own_redis: RedisProcess, workspace: str
) -> None:
    """The server forgot the save script but not the commit script (a restart, then someone
    else's commit): the Undo's save is answered NOSCRIPT and sent whole after the revert,
    which did not run on it. Its revert, checked as it came on what this process heard of
    the change (its time and version left to its commit), is not proposed as it was: the
    change is looked up and checked again, here found gone from the log (compacted, its
    idempotency record lapsed), and nothing is reverted."""
    client = Redis.from_url(own_redis.url, decode_responses=True)
    app = build_app(workspace, client=client)
    runtime = app.runtime(use_env=False)
    after, done = used(runtime)
    assert done.mutation_id is not None and done.key is not None
    assert runtime.made.record(done.mutation_id) is not None  # (checked as it comes)
    client.delete(app.store.keys.idempotency(done.mutation_id), app.store.keys.log)
    client.script_flush()
    client.script_load(COMMIT_LUA)
    undone = outcome(press(runtime, after, ActionType.REVERT_MUTATION, "u1"))
    assert (undone.outcome, undone.reason) == ("rejected", "not_found"), undone.message
    assert app.store.version(done.key) == 1 and app.store.get(done.key) is not None
    client.close()


def test_a_forged_undo_of_a_change_made_here_reverts_nothing(
    redis_client: RedisClient, workspace: str
) -> None:
    """An Undo click as a payload of the documented shape, forged: the version its button
    never named (the change kept here is not checked on it: looked up, and refused), and
    this workspace's change sent to another workspace's thread (its session lists none
    such). Nothing is reverted in either workspace."""
    app = build_app(workspace, client=redis_client)
    runtime = app.runtime(use_env=False)
    after, done = used(runtime)
    assert done.mutation_id is not None and done.key is not None
    button = next(b for b in after.buttons if b.action == ActionType.REVERT_MUTATION)
    forged = ActionClicked(
        action=ActionType.REVERT_MUTATION,
        target_id=button.target_id,
        expected_version=button.target_version + 1,
        click_id="forged-1",
        actor=actor("user:mallory"),
    )
    refused = outcome(runtime.send("s1", forged))
    assert (refused.outcome, refused.reason) == ("rejected", "not_found"), refused.message
    assert app.store.version(done.key) == 1
    other = build_app(f"{workspace}-other", client=redis_client)
    try:
        theirs = other.runtime(use_env=False)
        _, their_done = used(theirs)
        assert their_done.key is not None and their_done.mutation_id != done.mutation_id
        alien = forged.model_copy(update={"expected_version": 1, "click_id": "forged-2"})
        events = theirs.send("s1", alien)
        assert [e for e in events if isinstance(e, OutcomeEvent)] == []  # (a notice)
        assert other.store.version(their_done.key) == 1 and app.store.version(done.key) == 1
    finally:
        delete_workspace(redis_client, f"{workspace}-other")
