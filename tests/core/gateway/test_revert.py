"""Undo: a committed mutation reverted by a new mutation (never by rewriting the log),
version-checked against the key as the reverted mutation left it; the rules engine sees the
revert as the set (or delete) it is."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from bot.app import App, build_app
from core.gateway.outcome import Pending
from core.gateway.reverts import Revert, revert, revert_id, undo_lookup
from core.state.commit_result import Committed, Rejected, RejectReason
from core.state.mutation import Op
from core.state.scripts import LuaScript, ScriptCall, together
from tests.conftest import write_config
from tests.factories import actor, mutation
from tests.rules.rig import make_rig
from tests.servers.webhook import WebhookServer

AL, BO = actor("user:al"), actor("user:bo")


def commit(app: App, key: str, value: object, who: str = "user:al") -> Committed:
    done = app.gateway.propose(mutation("set", key, value, who))
    assert isinstance(done, Committed), done
    return done


def test_a_revert_restores_the_value_before_as_a_new_log_record(app: App) -> None:
    commit(app, "decision.db", "Postgres")
    second = commit(app, "decision.db", "MySQL")
    undone = revert(app.gateway, Revert(second.request.id, BO))
    assert isinstance(undone, Committed) and undone.version == 3
    entry = app.store.get("decision.db")
    assert entry is not None and entry.value == "Postgres" and entry.updated_by == BO
    records = app.log.latest(10, key="decision.db")
    assert [r.mutation.value for r in records] == ["Postgres", "MySQL", "Postgres"]
    last = records[-1].mutation
    assert last.meta["reverts"] == second.request.id and last.causation_id == second.request.id
    assert last.expected_version == 2 and last.id == revert_id(second.request.id)


def test_reverting_a_first_write_deletes_the_key(app: App) -> None:
    first = commit(app, "decision.new", "yes")
    undone = revert(app.gateway, Revert(first.request.id, BO))
    assert isinstance(undone, Committed) and undone.request.op is Op.DELETE
    assert app.store.get("decision.new") is None and app.store.version("decision.new") == 2


def test_a_revert_is_refused_when_the_key_moved_on_in_between(app: App) -> None:
    first = commit(app, "decision.x", "a")
    commit(app, "decision.x", "b", who="user:cy")
    refused = revert(app.gateway, Revert(first.request.id, BO))
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.CONFLICT
    assert refused.message == (
        "decision.x changed since that change (v1 then, v2 now): nothing was reverted"
    )
    assert app.store.get("decision.x").value == "b"  # type: ignore[union-attr]
    assert len(app.log.latest(10, key="decision.x")) == 2
    assert app.gateway.decisions.recent()[-1]["reverts"] == first.request.id


def test_a_revert_twice_commits_once(app: App) -> None:
    commit(app, "decision.y", "a")
    second = commit(app, "decision.y", "b")
    once = revert(app.gateway, Revert(second.request.id, BO))
    twice = revert(app.gateway, Revert(second.request.id, actor("user:cy")))
    assert isinstance(once, Committed) and isinstance(twice, Committed)
    assert twice.duplicate and twice.log_id == once.log_id
    assert app.store.version("decision.y") == 3


def test_who_may_revert_is_who_may_write_the_key(app: App) -> None:
    done = app.gateway.propose(mutation("set", "stream.state", "live", "moderator:mo"))
    assert isinstance(done, Committed)
    agent = revert(app.gateway, Revert(done.request.id, actor("agent:llm")))
    assert isinstance(agent, Rejected) and agent.reason is RejectReason.FORBIDDEN
    # stream.state is protected in the shipped policy: a member may not revert it
    member = revert(app.gateway, Revert(done.request.id, AL))
    assert isinstance(member, Rejected) and member.reason is RejectReason.PROTECTED
    assert app.store.get("stream.state").value == "live"  # type: ignore[union-attr]
    moderator = revert(app.gateway, Revert(done.request.id, actor("moderator:max")))
    assert isinstance(moderator, Committed) and app.store.get("stream.state") is None


def test_unknown_forged_and_late_undos_change_nothing(app: App) -> None:
    done = commit(app, "decision.z", "a")
    unknown = revert(app.gateway, Revert("no-such-mutation", BO))
    assert isinstance(unknown, Rejected) and unknown.reason is RejectReason.NOT_FOUND
    assert "no committed mutation no-such-mutation" in unknown.message
    forged = revert(app.gateway, Revert(done.request.id, BO, version=7))  # not the one it made
    assert isinstance(forged, Rejected) and forged.reason is RejectReason.NOT_FOUND
    late = revert(app.gateway, Revert(done.request.id, BO, offered_for_ms=0))
    assert isinstance(late, Rejected) and late.reason is RejectReason.EXPIRED
    # until when, to the second, and how long ago (the offer ended as it was made)
    until = datetime.fromtimestamp(done.ts / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    assert late.message in {
        f"Undo was offered until {until} ({ago}); "
        f"`deliberate revert {done.request.id}` can still revert it"
        for ago in ("now", "1 s ago")
    }
    assert app.store.version("decision.z") == 1


@pytest.mark.parametrize("how", ["lapsed", "pointing elsewhere", "garbage", "unreadable"])
def test_a_revert_finds_its_record_in_the_log_when_the_idempotency_record_fails_it(
    app: App, how: str
) -> None:
    """The record is found through the mutation's idempotency record (one round trip);
    that record lapsed after its days, or rewritten to point at another record, or not
    one at all, or pointing at a forged record that cannot be read as one, the log is looked
    through instead, and the right mutation is reverted."""
    commit(app, "decision.q", "a")
    second = commit(app, "decision.q", "b")
    other = commit(app, "decision.other", "x")
    idem = app.store.keys.idempotency(second.request.id)
    if how == "lapsed":
        app.redis.delete(idem)
    elif how == "pointing elsewhere":
        app.redis.set(idem, f"{other.log_id}\nv2")
    elif how == "garbage":
        app.redis.set(idem, "no record here")
    else:  # its id and key, but no time or version
        forged = json.dumps({"id": second.request.id, "key": "decision.q"})
        log_id = app.redis.xadd(app.store.keys.log, {"mutation": forged})
        app.redis.set(idem, f"{log_id}\nv2")
    undone = revert(app.gateway, Revert(second.request.id, BO, version=2))
    assert isinstance(undone, Committed) and undone.request.key == "decision.q"
    assert app.store.get("decision.q").value == "a"  # type: ignore[union-attr]
    assert app.store.get("decision.other").value == "x"  # type: ignore[union-attr]


def looked_up(app: App, mutation_id: str) -> Any:
    """The revert's lookup as an Undo click sends it: beside another script (the click's
    save), in one pipeline."""
    beside = ScriptCall(LuaScript(app.redis, "return 1"), [app.store.keys.versions], [])
    _, reply = together(app.redis, [beside, undo_lookup(app.store, mutation_id)])
    return reply


def test_a_write_between_the_lookup_and_the_commit_is_not_overwritten(app: App) -> None:
    """The lookup saw the key at the version the change made; another write lands before
    the revert commits: the commit's version check refuses it, and the refusal is logged."""
    commit(app, "decision.w", "a")
    second = commit(app, "decision.w", "b")
    reply = looked_up(app, second.request.id)
    commit(app, "decision.w", "c", who="user:cy")
    refused = revert(app.gateway, Revert(second.request.id, BO, version=2), reply)
    assert isinstance(refused, Rejected) and refused.reason is RejectReason.CONFLICT
    assert refused.message == (
        "decision.w changed since that change (v2 then, v3 now): nothing was reverted"
    )
    assert app.store.get("decision.w").value == "c"  # type: ignore[union-attr]
    logged = app.gateway.decisions.recent()[-1]
    assert (logged["mutation_id"], logged["reason"]) == (revert_id(second.request.id), "conflict")


def test_a_revert_committed_between_the_lookup_and_the_commit_commits_once(app: App) -> None:
    commit(app, "decision.v", "a")
    second = commit(app, "decision.v", "b")
    reply = looked_up(app, second.request.id)
    first = revert(app.gateway, Revert(second.request.id, actor("user:cy")))  # the CLI's
    again = revert(app.gateway, Revert(second.request.id, BO, version=2), reply)
    assert isinstance(first, Committed) and isinstance(again, Committed)
    assert again.duplicate and again.log_id == first.log_id
    assert app.store.version("decision.v") == 3


def test_an_undo_found_reverted_already_answers_its_first_result(app: App) -> None:
    """The lookup says the revert committed (the key is past the version the change made
    because of it): not refused as moved on, answered as the first time."""
    done = commit(app, "decision.u", "a")
    first = revert(app.gateway, Revert(done.request.id, BO))
    again = revert(app.gateway, Revert(done.request.id, BO), looked_up(app, done.request.id))
    assert isinstance(first, Committed) and isinstance(again, Committed) and again.duplicate
    assert app.store.version("decision.u") == 2


REFUSALS = {
    # what makes the Undo wrong, the reason it is refused with
    "moved on": RejectReason.CONFLICT,
    "late": RejectReason.EXPIRED,
    "by an agent": RejectReason.FORBIDDEN,
    "not the version it made": RejectReason.NOT_FOUND,
    "of nothing committed": RejectReason.NOT_FOUND,
    "of a lapsed record": RejectReason.NOT_FOUND,
    "protected": RejectReason.PROTECTED,
}


@pytest.mark.parametrize("how", list(REFUSALS))
def test_an_undo_looked_up_with_the_save_is_refused_as_before_and_logged(
    app: App, how: str
) -> None:
    key = "stream.state" if how == "protected" else "decision.r"
    done = app.gateway.propose(mutation("set", key, "live", "moderator:mo"))
    assert isinstance(done, Committed)
    mutation_id = "no-such-mutation" if how == "of nothing committed" else done.request.id
    if how == "moved on":
        commit(app, key, "b", who="user:cy")
    if how == "of a lapsed record":  # the log is looked through, among its newest 0 records
        app.redis.delete(app.store.keys.idempotency(mutation_id))
    request = Revert(
        mutation_id,
        actor("agent:llm") if how == "by an agent" else AL,
        version=7 if how == "not the version it made" else done.version,
        offered_for_ms=0 if how == "late" else 600_000,
        scan=0 if how == "of a lapsed record" else None,
    )
    version = app.store.version(key)
    refused = revert(app.gateway, request, looked_up(app, mutation_id))
    assert isinstance(refused, Rejected) and refused.reason is REFUSALS[how], refused
    logged = app.gateway.decisions.recent()[-1]
    assert logged["mutation_id"] == revert_id(mutation_id)
    assert (logged["outcome"], logged["reason"]) == ("rejected", refused.reason.value)
    assert app.store.version(key) == version


HELD = (
    files("core.config")
    .joinpath("default.yaml")
    .read_text(encoding="utf-8")
    .replace(
        "  keys:\n",
        '  keys:\n    - pattern: "held.*"\n      type: string\n      approval: {people: true}\n',
        1,
    )
)


def test_an_undo_of_a_key_whose_writes_wait_waits_for_approval(
    tmp_path: Path, redis_client: Redis, workspace: str
) -> None:
    app = build_app(workspace, write_config(tmp_path, HELD), client=redis_client)
    done = app.store.commit(mutation("set", "held.plan", "a", "user:al"))  # (set up as done)
    assert isinstance(done, Committed)
    waits = revert(app.gateway, Revert(done.request.id, BO), looked_up(app, done.request.id))
    assert isinstance(waits, Pending) and app.store.version("held.plan") == 1
    logged = app.gateway.decisions.recent()[-1]
    assert (logged["mutation_id"], logged["outcome"]) == (revert_id(done.request.id), "pending")


@pytest.fixture
def hook() -> Iterator[WebhookServer]:
    with WebhookServer() as server:
        yield server


def test_the_rules_engine_sees_a_revert_as_a_set(
    tmp_path: Path, redis_client: Redis, workspace: str, hook: WebhookServer
) -> None:
    rule = f"""
  - id: notify
    when: {{key: "test.*", op: set}}
    then:
      - action: http.post
        args:
          url: "{hook.hook_url}"
          json: {{key: "{{{{ mutation.key }}}}", value: "{{{{ mutation.value }}}}"}}
"""
    rig = make_rig(tmp_path, redis_client, workspace, rule)
    rig.commit("set", "test.r", "one")
    second = rig.commit("set", "test.r", "two")
    rig.work()
    undone = revert(rig.app.gateway, Revert(second.request.id, actor("moderator:mia")))
    assert isinstance(undone, Committed)
    rig.work()
    assert [r.json for r in hook.requests] == [
        {"key": "test.r", "value": "one"},
        {"key": "test.r", "value": "two"},
        {"key": "test.r", "value": "one"},
    ]
