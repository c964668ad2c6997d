"""A commit made on a session's save (``StateStore.commit_on``, commit.lua's KEYS[9]): a
click's commit, sent in the same round trip as the click's save, runs only if that save
landed, known by its token among the session's last saves' tokens (``session_cas.lua``);
otherwise it writes nothing at all and answers "unsaved". A commit made already answers as
its first run did, whatever the guard finds. On the suite's Redis, through the real scripts."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.app import App
from core.gateway.mutation_gateway import MutationGateway
from core.state.commit_result import Committed, Rejected, RejectReason
from core.state.keys import WorkspaceKeys
from core.state.limits import NO_LIMITS, Durability
from core.state.mutation import Mutation
from core.state.scripts import ScriptCall
from core.state.store import StateStore
from tests.factories import mutation

TOKENS = st.text(alphabet="0123456789abcdef", min_size=32, max_size=32)


def decision(value: str = "postgres") -> Mutation:
    return mutation("set", f"decision.db-{uuid.uuid4().hex[:8]}", value)


def session_saved_by(app: App, *tokens: str) -> str:
    """A session hash whose last saves are ``tokens`` (newest first), as session_cas.lua
    keeps them; its key."""
    key = WorkspaceKeys(app.store.workspace).session(f"s-{uuid.uuid4().hex[:8]}")
    app.redis.hset(key, mapping={"version": len(tokens), "saves": " ".join(tokens)})
    return key


def written(app: App, m: Mutation) -> tuple[int, int, bool, int]:
    """What a commit of ``m`` writes: the key's version, the log's length, its idempotency
    record, the chain's length."""
    keys = app.store.keys
    chain = app.redis.hget(keys.chain, "n")
    return (
        app.store.version(m.key),
        app.redis.xlen(keys.log),
        bool(app.redis.exists(keys.idempotency(m.id))),
        int(chain or 0),
    )


def test_a_commit_made_on_a_save_that_landed_commits(app: App) -> None:
    m = decision()
    key = session_saved_by(app, "a" * 32, "b" * 32)
    call = app.store.commit_on(m, NO_LIMITS, key, "b" * 32)
    outcome = app.store.answered(m, call.run())
    assert isinstance(outcome, Committed) and outcome.version == 1 and not outcome.duplicate
    assert written(app, m) == (1, 1, True, 1)
    assert app.store.get(m.key) is not None


def test_a_commit_made_on_a_save_that_did_not_land_writes_nothing(app: App) -> None:
    """The save was beaten (its token never kept), or the session is gone: nothing of the
    commit is written, not its log record, version, idempotency record or chain link."""
    m = decision()
    before = written(app, m)
    for key in (session_saved_by(app, "a" * 32), session_saved_by(app)):
        call = app.store.commit_on(m, NO_LIMITS, key, "c" * 32)
        assert app.store.answered(m, call.run()) is None
    gone = WorkspaceKeys(app.store.workspace).session("never-saved")
    assert app.store.answered(m, app.store.commit_on(m, NO_LIMITS, gone, "c" * 32).run()) is None
    assert written(app, m) == before == (0, 0, False, 0)
    assert app.store.get(m.key) is None


def test_a_token_no_save_could_have_is_never_found(app: App) -> None:
    """An empty token, or one with a space (which could span two kept ones), is refused by
    the script itself, whatever the session keeps."""
    m = decision()
    key = session_saved_by(app, "a" * 32, "b" * 32)
    call = app.store.commit_on(m, NO_LIMITS, key, "a" * 32)
    for token in ("", f"{'a' * 32} {'b' * 32}", " "):
        forged = ScriptCall(call.script, call.keys, [*call.args[:16], token, *call.args[17:]])
        assert forged.run() == ["unsaved"], token
    assert written(app, m) == (0, 0, False, 0)


def test_a_commit_made_already_answers_as_it_did_whatever_the_guard_finds(app: App) -> None:
    """The idempotency record comes first: the same mutation sent again by another request
    (a retry, the click delivered twice) answers with its first result, also on a save that
    did not land; the same call sent again (its answer lost) is this commit, not a repeat."""
    m = decision()
    landed = session_saved_by(app, "a" * 32)
    call = app.store.commit_on(m, NO_LIMITS, landed, "a" * 32)
    first = app.store.answered(m, call.run())
    assert isinstance(first, Committed)
    beaten = session_saved_by(app, "b" * 32)
    again = app.store.answered(m, app.store.commit_on(m, NO_LIMITS, beaten, "c" * 32).run())
    assert isinstance(again, Committed) and again.duplicate and again.version == 1
    resent = app.store.answered(m, call.run())
    assert isinstance(resent, Committed) and not resent.duplicate and resent.version == 1
    assert written(app, m) == (1, 1, True, 1)


def test_another_request_of_the_same_mutation_is_a_repeat(app: App) -> None:
    """A commit answered as made already is this request's first run only if that run had
    this request's own id (drawn per request, ``commit_call``): a second click on the same
    candidate (the same mutation id, its own request), or the same mutation committed again
    with the same correlation id and actor (a job run again), is told it was done already."""
    ann = decision()
    bob = ann.model_copy(update={"correlation_id": "bobs-click", "actor": ann.actor})
    first = app.store.answered(
        ann, app.store.commit_on(ann, NO_LIMITS, session_saved_by(app, "a" * 32), "a" * 32).run()
    )
    assert isinstance(first, Committed) and not first.duplicate
    for other in (bob, ann):
        reply = app.store.commit_on(other, NO_LIMITS, session_saved_by(app, "b" * 32), "b" * 32)
        again = app.store.answered(other, reply.run())
        assert isinstance(again, Committed) and again.duplicate
        assert again.request.correlation_id == ann.correlation_id
    again = app.store.commit(ann)
    assert isinstance(again, Committed) and again.duplicate


def test_a_record_an_older_release_wrote_names_no_request(app: App) -> None:
    """An idempotency record written before requests had ids ("<logId>\nv<version>") is
    nobody's: the same call sent again is told it was made already, as it was then."""
    m = decision()
    call = app.store.commit_on(m, NO_LIMITS, session_saved_by(app, "a" * 32), "a" * 32)
    first = app.store.answered(m, call.run())
    assert isinstance(first, Committed)
    record = app.redis.get(app.store.keys.idempotency(m.id))
    log_id, version, request = record.split("\n")
    assert (log_id, version) == (first.log_id, "v1") and request == call.args[17]  # (ARGV[18])
    app.redis.set(app.store.keys.idempotency(m.id), f"{log_id}\n{version}")
    again = app.store.answered(m, call.run())
    assert isinstance(again, Committed) and again.duplicate and again.version == 1


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kept=st.lists(TOKENS, max_size=16, unique=True),
    token=TOKENS,
    among=st.none() | st.integers(min_value=0, max_value=15),
)
def test_the_commit_runs_exactly_when_the_session_keeps_its_token(
    app: App, kept: list[str], token: str, among: int | None
) -> None:
    """``among``: the token is the kept one at that place (None: drawn apart)."""
    if among is not None and kept:
        token = kept[among % len(kept)]
    m = decision()
    key = session_saved_by(app, *kept)
    outcome = app.store.answered(m, app.store.commit_on(m, NO_LIMITS, key, token).run())
    assert (outcome is not None) is (token in kept)
    assert app.store.version(m.key) == (1 if token in kept else 0)


def test_the_gateway_commits_on_a_save_only_what_it_would_commit_at_once(app: App) -> None:
    """``ready`` gives the policy's verdict for a write it lets through at once; a key no
    policy allows (refused) gets None, to be proposed as ever, as does every write of a
    store whose commits wait for replicas."""
    allowed, refused = decision(), mutation("set", "nobody.allows-this", 1)
    verdict = app.gateway.ready(allowed)
    assert verdict is not None and verdict.mutation.key == allowed.key
    assert app.gateway.ready(refused) is None
    key = session_saved_by(app, "a" * 32)
    call = app.gateway.commit_on(verdict, key, "a" * 32)
    outcome = app.gateway.answered(verdict, call.run())
    assert isinstance(outcome, Committed) and outcome.version == 1
    beaten = app.gateway.commit_on(verdict, session_saved_by(app), "b" * 32)
    assert app.gateway.answered(verdict, beaten.run()) is not None  # made already
    fresh = decision()
    fresh_verdict = app.gateway.ready(fresh)
    assert fresh_verdict is not None
    unsaved = app.gateway.commit_on(fresh_verdict, session_saved_by(app), "b" * 32)
    assert app.gateway.answered(fresh_verdict, unsaved.run()) is None
    assert app.store.version(fresh.key) == 0


def test_a_store_whose_commits_wait_for_replicas_commits_nothing_on_a_save(app: App) -> None:
    """``WAIT`` must follow the commit on its own connection (``StateStore._commit_and_wait``):
    such a store's writes are proposed, and committed, alone."""
    waiting = StateStore(app.redis, app.store.workspace, durability=Durability(1, 50))
    gateway = MutationGateway(waiting, app.gateway.policy)
    assert gateway.ready(decision()) is None


def test_a_commit_made_on_a_save_says_what_its_key_held_before_as_the_log_keeps_it(
    app: App,
) -> None:
    """Absent (None), a value (as the log record's ``prev``), or, past the store's
    ``prev_max_bytes``, not said at all (the log keeps its SHA-1 only)."""
    m = decision("postgres")
    token = "c" * 32
    key = session_saved_by(app, token)

    def made(change: Mutation, store: StateStore = app.store) -> Committed:
        outcome = store.answered(change, store.commit_on(change, NO_LIMITS, key, token).run())
        assert isinstance(outcome, Committed) and not outcome.duplicate
        return outcome

    first = made(m)
    assert (first.prev_said, first.prev_json) == (True, None)
    second = made(mutation("set", m.key, "mysql", expected_version=1))
    assert (second.prev_said, second.prev_json) == (True, '"postgres"')
    [record] = app.log.latest(1)
    assert record.prev_json == second.prev_json
    small = StateStore(app.redis, app.store.workspace, prev_max_bytes=4)
    third = made(mutation("set", m.key, "sqlite", expected_version=2), small)
    assert (third.prev_said, third.prev_json) == (False, None)
    plain = app.store.commit(mutation("set", m.key, "x", expected_version=3))
    assert isinstance(plain, Committed) and not plain.prev_said  # (not asked)


def test_a_commit_past_its_deadline_writes_nothing_and_says_the_servers_clock(
    app: App,
) -> None:
    m = decision()
    key = session_saved_by(app, "d" * 32)
    now = int(app.redis.time()[0]) * 1000
    late = app.store.commit_on(m, NO_LIMITS, key, "d" * 32, deadline=now - 1)
    outcome = app.store.answered(m, late.run())
    assert isinstance(outcome, Rejected) and outcome.reason is RejectReason.EXPIRED
    assert outcome.at is not None and outcome.at >= now
    assert written(app, m) == (0, 0, False, 0)
    in_time = app.store.commit_on(m, NO_LIMITS, key, "d" * 32, deadline=now + 3_600_000)
    assert isinstance(app.store.answered(m, in_time.run()), Committed)
    assert written(app, m) == (1, 1, True, 1)
